#!/usr/bin/env bash
# The GPU check: lcc's compiled models on an NVIDIA GPU against the CPU.
#
#   bash tools/gpu-check.sh prepare   here, after a build: compile every
#       numerics case for cpu,cuda, run it on the CPU and on the CUDA
#       emulator, keep inputs, weights, the CPU results and the emulator's
#       error against them; compile the timing cases for cuda. Writes
#       build/gpu-check/ (carry it to the GPU machine).
#   bash tools/gpu-check.sh           on the GPU machine (no MLIR, no
#       FlatBuffers, no network; cmake, a C++ compiler, python3): build the
#       runtime, lcc-run and the reference tools (lcc-compare, lcc-testdata)
#       from source, run every case on the GPU, compare with the CPU
#       results (beside the emulator's error), print one table. Exit status 1 if any case fails or
#       mismatches.
#
# With the device tool: run(command="bash tools/gpu-check.sh",
# carry=["build/gpu-check"]). Record each run in docs/gpu-log.md.
set -euo pipefail

cd "$(dirname "$0")/.."
check_dir=build/gpu-check

if [ "${1:-}" = prepare ]; then
  bin="$PWD/${BUILD_DIR:-build}/bin"
  rm -rf "$check_dir"
  mkdir -p "$check_dir/schema/lcc"
  # What the runtime's build needs instead of FlatBuffers: its headers and
  # the header flatc generated from runtime/schema/lcm.fbs.
  cp -r /usr/include/flatbuffers "$check_dir/schema/"
  cp "${BUILD_DIR:-build}/runtime/generated/lcc/lcm_generated.h" "$check_dir/schema/lcc/"
  python3 tools/gpu_check.py prepare "$bin" "$check_dir"
  du -sh "$check_dir"
  exit 0
fi

[ -f "$check_dir/cases.json" ] || {
  echo "gpu-check: no $check_dir/cases.json; run 'bash tools/gpu-check.sh prepare' here first and carry $check_dir" >&2
  exit 2
}
start=$(date +%s)
build=/tmp/lcc-gpu-check-build
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DLCC_BUILD_COMPILER=OFF -DLCC_BUILD_TESTS=OFF \
  -DLCC_PREBUILT_SCHEMA_DIR="$PWD/$check_dir/schema" >/dev/null
cmake --build "$build" -j"$(nproc)" --target lcc-run >/dev/null
cmake -S test/reference -B "$build/reference" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build/reference" -j"$(nproc)" >/dev/null
cp "$build"/reference/bin/lcc-compare "$build"/reference/bin/lcc-testdata "$build/bin/"
echo "runtime and reference tools built in $(( $(date +%s) - start )) s"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
status=0
python3 tools/gpu_check.py run "$build/bin" "$check_dir" || status=$?
echo "gpu-check finished in $(( $(date +%s) - start )) s"
exit $status
