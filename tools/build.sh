#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine (run as root):
#   bash tools/build.sh run    install, build, compile a bundled model, show it
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
  echo "== lcc models/reformer-tiny.mlir --emit=attn"
  "$build_dir/bin/lcc" models/reformer-tiny.mlir --emit=attn
else
  ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)"
fi
