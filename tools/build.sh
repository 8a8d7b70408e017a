#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine (run as root):
#   bash tools/build.sh run    install, build, compile the bundled Reformer for
#                              the CPU and run it on random tokens
#   bash tools/build.sh test   install, build, run the whole test suite
# BUILD_DIR (default: build) chooses the build folder.
set -euo pipefail

cd "$(dirname "$0")/.."
mode="${1:-}"
case "$mode" in
  run | test) ;;
  *)
    echo "usage: bash tools/build.sh run|test" >&2
    exit 2
    ;;
esac

bash tools/setup.sh

build_dir="${BUILD_DIR:-build}"
if [ ! -f "$build_dir/build.ninja" ]; then
  cmake -G Ninja -S . -B "$build_dir" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir
fi
cmake --build "$build_dir"

if [ "$mode" = run ]; then
  bin="$build_dir/bin"
  out="$build_dir/demo"
  mkdir -p "$out"
  echo "== compile models/reformer-tiny.mlir for the CPU"
  time "$bin/lcc" models/reformer-tiny.mlir --target=cpu -o "$out/reformer-tiny.lcm"
  echo "== fresh weights (seed 1) and random tokens (seed 2)"
  "$bin/lcc-run" "$out/reformer-tiny.lcm" --init-params="$out/weights.safetensors" --seed=1
  "$bin/lcc-testdata" --output="$out/tokens.npy" --shape=1,1024 --dtype=i32 \
    --uniform=0,256 --seed=2
  echo "== run"
  "$bin/lcc-run" "$out/reformer-tiny.lcm" --input="$out/tokens.npy" \
    --params="$out/weights.safetensors" --output-dir="$out" --warmup=1 --repeat=5
else
  # ctest lists skipped tests (the GPU-only ones) after its summary; the
  # summary is repeated last, where CI reads it.
  status=0
  ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" \
    | tee "$build_dir/ctest.log" || status=$?
  grep -E '^[0-9]+% tests passed' "$build_dir/ctest.log" | tail -1
  exit $status
fi
