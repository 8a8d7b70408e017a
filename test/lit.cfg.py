# lit configuration for the lcc test suites.
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "lcc"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "README.md", "lit.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.lcc_obj_root, "test")

config.substitutions.append(("%models", os.path.join(config.lcc_src_root, "models")))
# The example plugin as this build made it (plugins/local-attention/), and
# the folders an out-of-tree build of it needs.
config.substitutions.append(("%local_plugin", os.path.join(config.lcc_obj_root, "lib", "lcc-local-attention.so")))
config.substitutions.append(("%lcc_src", config.lcc_src_root))
config.substitutions.append(("%lcc_obj", config.lcc_obj_root))
# LLVM's headers, for test libraries that read its version.
config.substitutions.append(("%llvm_include", os.path.join(os.path.dirname(config.llvm_tools_dir), "include")))
# The folder of lcc's tools, for scripts that drive them (the model fuzzer).
config.substitutions.append(("%lcc_bin", config.lcc_tools_dir))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
# One kernel cache for the whole suite, in the build tree (each build's
# kernels keyed by its own build id), never the user's: the tests share
# their kernels and leave nothing in ~/.cache.
config.environment["LCC_CACHE_DIR"] = os.path.join(config.lcc_obj_root, "kernel-cache")

# `--param device=cuda-emulator` (ctest's emulator/ tests) runs the numeric
# suites on the GPU path: lcc compiles for cuda, and lcc-run, lcc-train and
# lcc-generate run the GPU kernels on the CUDA emulator with memcheck and racecheck, the
# threads of each block in `--param thread_order` (default shuffled:1;
# ctest gives each test one of shuffled, reversed and forward in turn). A test that is about the CPU's
# code says `UNSUPPORTED: cuda-emulator`.
from lit.llvm.subst import ToolSubst
device = lit_config.params.get("device", "cpu")
if device not in ("cpu", "cuda-emulator"):
    lit_config.fatal("unknown --param device=%s; expected cpu or cuda-emulator" % device)
device_tools = []
if device == "cuda-emulator":
    config.available_features.add("cuda-emulator")
    emulator = ["--device=cuda-emulator", "--check=memcheck,racecheck",
                "--thread-order=" + lit_config.params.get("thread_order", "shuffled:1")]
    device_tools = [ToolSubst("lcc", extra_args=["--target=cuda"]),
                    ToolSubst("lcc-run", extra_args=emulator),
                    ToolSubst("lcc-train", extra_args=emulator),
                    ToolSubst("lcc-generate", extra_args=emulator)]
    config.test_exec_root = os.path.join(config.lcc_obj_root, "test-emulator")
# `%one_thread`: the cpu device on one worker (bit-for-bit repeatable runs);
# the emulator runs on one thread anyway and takes no --threads.
config.substitutions.append(
    ("%one_thread", "" if device == "cuda-emulator" else "--threads=1"))
tools = ["lcc-opt", "lcc-reference", "lcc-testdata", "lcc-compare",
         "lcm-testgen", "lcm-edit", "lcc-import", "lcc-ranks-check"]
tools += device_tools or ["lcc", "lcc-run", "lcc-train", "lcc-generate"]
llvm_config.add_tool_substitutions(tools, [config.lcc_tools_dir])

# `%numpy_python`: Debian's python3, which has numpy (the tools/ scripts that
# write test checkpoints need it; lit's own python may be another).
import sys
config.substitutions.append(
    ("%numpy_python", "/usr/bin/python3"
     if os.access("/usr/bin/python3", os.X_OK) else sys.executable))

# `sanitizers` in the ASan + UBSan build: a test whose cost is the
# reference's thousands of model evaluations says UNSUPPORTED there (the
# first CI stage runs it; its compiled code is not instrumented anyway).
if getattr(config, "lcc_sanitize", ""):
    config.available_features.add("sanitizers")
    # Open MPI's own allocations, kept to exit (test/lsan-openmpi.supp).
    config.environment["LSAN_OPTIONS"] = "suppressions=" + os.path.join(
        config.lcc_src_root, "test", "lsan-openmpi.supp")

# `ptxas` where a CUDA toolkit is installed: the cubin tests need it; CI
# machines have none and run the PTX-only tests instead.
import shutil
if shutil.which("ptxas") or os.access("/usr/local/cuda/bin/ptxas", os.X_OK):
    config.available_features.add("ptxas")

# The CPU's vector instructions, for the tests that run code compiled for a
# named CPU that has them: `avx2` (Haswell's AVX2 set), `avx512` (Skylake's
# AVX-512), `avx512-bf16` (dot products) and `amx-bf16` (tile products;
# Linux grants the tile state on request from 5.16).
try:
    with open("/proc/cpuinfo") as cpuinfo:
        flags = next((line.split(":", 1)[1].split() for line in cpuinfo
                      if line.startswith("flags")), [])
except OSError:
    flags = []
if {"avx2", "fma", "bmi1", "bmi2", "f16c", "movbe", "abm"} <= set(flags):
    config.available_features.add("avx2")  # what --cpu=haswell needs
if {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"} <= set(flags):
    config.available_features.add("avx512")  # what --cpu=skylake-avx512 needs
if "avx512_bf16" in flags:
    config.available_features.add("avx512-bf16")
if "amx_bf16" in flags and "amx_tile" in flags:
    config.available_features.add("amx-bf16")

# `mpirun` where Open MPI is installed (tools/setup.sh installs it): the
# tests of several ranks. `%mpirun` runs as root (CI does) and
# oversubscribed (four ranks on two cores), in a container without the
# cross-memory attach Open MPI tries first.
if shutil.which("mpirun"):
    config.available_features.add("mpirun")
    for variable, value in [("OMPI_ALLOW_RUN_AS_ROOT", "1"),
                            ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"),
                            ("OMPI_MCA_btl_vader_single_copy_mechanism", "none"),
                            ("OMPI_MCA_rmaps_base_oversubscribe", "1")]:
        config.environment[variable] = value
mpirun = "mpirun --oversubscribe"
if getattr(config, "lcc_sanitize", ""):
    # The ranks' leak reports unwind fully, through Open MPI's frames, so
    # that test/lsan-openmpi.supp recognises its allocations (slow: only
    # here).
    mpirun = "env ASAN_OPTIONS=%s:fast_unwind_on_malloc=0 %s" % (
        os.environ.get("ASAN_OPTIONS", ""), mpirun)
config.substitutions.append(("%mpirun", mpirun))
