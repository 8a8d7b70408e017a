#!/bin/sh
# lcc-run-fake-cuda.sh LCM-TESTGEN LCC-RUN FAKE-DRIVER
#
# lcc-run --device=cuda end to end on the fake driver (FakeCudaDriver.c):
# lit cannot name the fake library's path, so this runs under ctest. Each
# check prints what it saw when it fails.
set -u
testgen=$1 run=$2 fake=$3
dir=lcc-run-fake-cuda.d
rm -rf "$dir" && mkdir -p "$dir" && "$testgen" "$dir" || exit 1
status=0

# expect NAME PATTERN FILE: FILE holds PATTERN (a fixed string).
expect() {
  if ! grep -qF -- "$2" "$3"; then
    echo "FAIL $1: expected '$2' in:" && cat "$3"
    status=1
  fi
}

# add-gpu.lcm on the GPU, with the JSON report naming the device.
LCC_CUDA_DRIVER=$fake "$run" "$dir/add-gpu.lcm" --device=cuda \
  --input="$dir/a.npy" --input="$dir/b.npy" --output-dir="$dir" \
  --repeat=2 --report=json >"$dir/json" 2>&1 || { cat "$dir/json"; status=1; }
expect json '"device":"cuda","device_name":"Fake CUDA Device","device_arch":"sm_90","calls":2' "$dir/json"
expect json '"peak_bytes":1600' "$dir/json"
expect json '"commands":[{"name":"add","kind":"dispatch","mean_ms":' "$dir/json"
expect json '"checksum":24384}]}' "$dir/json"

# The result file holds the sum: feeding it back adds 8128 more (written
# elsewhere: lcc-run refuses to write over a file it reads).
mkdir -p "$dir/again"
LCC_CUDA_DRIVER=$fake "$run" "$dir/add-gpu.lcm" --device=cuda \
  --input="$dir/result0.npy" --input="$dir/a.npy" --output-dir="$dir/again" \
  >"$dir/text" 2>&1 || { cat "$dir/text"; status=1; }
expect text 'result0: [128] f32 checksum 32512' "$dir/text"

# Errors: one line, exit status 1.
check_error() { # NAME EXPECTED -- COMMAND...
  name=$1 message=$2
  shift 3
  "$@" >"$dir/out" 2>"$dir/err"
  code=$?
  if [ "$code" != 1 ] || [ "$(wc -l <"$dir/err")" != 1 ]; then
    echo "FAIL $name: exit status $code, stderr:" && cat "$dir/err"
    status=1
  fi
  expect "$name" "$message" "$dir/err"
}
check_error no-code \
  "add.lcm: module has no code for the cuda device sm_90: it holds x86_64 (HostSharedObject)" \
  -- env LCC_CUDA_DRIVER="$fake" "$run" "$dir/add.lcm" --device=cuda
check_error old-gpu \
  "add-gpu.lcm: module has no code for the cuda device sm_80: it holds x86_64 (HostSharedObject), sm_90 (Ptx), sm_90 (Cubin)" \
  -- env LCC_CUDA_DRIVER="$fake" LCC_FAKE_CUDA_ARCH=80 "$run" "$dir/add-gpu.lcm" --device=cuda
check_error no-device \
  "lcc-run: error: cuda device unavailable: cuInit failed: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)" \
  -- env LCC_CUDA_DRIVER="$fake" LCC_FAKE_CUDA_FAIL=cuInit:100 "$run" "$dir/add-gpu.lcm" --device=cuda
check_error no-driver \
  "lcc-run: error: cuda device unavailable: cannot load /nonexistent/libcuda.so.1, named by LCC_CUDA_DRIVER" \
  -- env LCC_CUDA_DRIVER=/nonexistent/libcuda.so.1 "$run" "$dir/add-gpu.lcm" --device=cuda
exit $status
