#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine (run as root):
#   bash tools/build.sh run    install, build, compile the bundled Reformer for
#                              the CPU and run it on random tokens
#   bash tools/build.sh test   install, build, run the whole test suite (CI):
#                              the tests (with the differential model fuzzer
#                              and the CUDA emulator suite), the tests of
#                              what meets user input (ctest label `inputs`)
#                              built with ASan + UBSan, and the libFuzzer
#                              targets on their corpora (30 s each)
#   bash tools/build.sh test-long   the same, with every test under ASan +
#                              UBSan in the second stage (sampled before the
#                              scoping: 2.8x stage 1's test time; CI does not
#                              run it)
# BUILD_DIR (default: build) chooses the build folder; the sanitizer build
# goes to $BUILD_DIR-sanitize. LCC_SKIP_SANITIZE=1 runs the first stage only.
# test/README.md says where the time goes.
set -euo pipefail

cd "$(dirname "$0")/.."
mode="${1:-}"
case "$mode" in
  run | test | test-long) ;;
  *)
    echo "usage: bash tools/build.sh run|test|test-long" >&2
    exit 2
    ;;
esac

bash tools/setup.sh

configure() { # DIR [cmake options...]
  local dir="$1"
  shift
  if [ ! -f "$dir/build.ninja" ]; then
    cmake -G Ninja -S . -B "$dir" \
      -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir "$@"
  fi
  cmake --build "$dir"
}

build_dir="${BUILD_DIR:-build}"
configure "$build_dir" -DCMAKE_BUILD_TYPE=Release

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
  exit 0
fi

# run_ctest DIR LOG [CTEST OPTIONS...]: runs one build's tests; prints its
# summary; adds its counts.
passed=0
failed=0
status=0
run_ctest() {
  local dir="$1" log="$2" stage_status=0
  shift 2
  ctest --test-dir "$dir" --output-on-failure -j "$(nproc)" "$@" | tee "$log" ||
    stage_status=$?
  local summary
  summary=$(grep -E '^[0-9]+% tests passed' "$log" | tail -1)
  echo "$summary"
  local total bad
  total=$(echo "$summary" | grep -oE 'out of [0-9]+' | grep -oE '[0-9]+')
  bad=$(echo "$summary" | grep -oE '[0-9]+ tests failed' | grep -oE '^[0-9]+')
  passed=$((passed + ${total:-0} - ${bad:-0}))
  failed=$((failed + ${bad:-1}))
  [ "$stage_status" -eq 0 ] || status=1
}

echo "== stage 1: tests ($build_dir)"
run_ctest "$build_dir" "$build_dir/ctest.log"

if [ "${LCC_SKIP_SANITIZE:-}" != 1 ]; then
  san_dir="$build_dir-sanitize"
  if [ "$mode" = test-long ]; then
    echo "== stage 2: every test under ASan + UBSan ($san_dir)"
  else
    echo "== stage 2: the tests of what meets user input (label inputs) under ASan + UBSan ($san_dir)"
  fi
  # Line tables are all a sanitizer report needs, at a fraction of -g's
  # compile and link time.
  configure "$san_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -gline-tables-only -DNDEBUG" \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -gline-tables-only -DNDEBUG" \
    -DLCC_SANITIZE=address,undefined -DLCC_BUILD_FUZZERS=ON
  # Debian's MLIR is not instrumented: its allocators' manual poisoning and
  # its containers' annotations only confuse ASan about memory they share
  # with lcc's instrumented code.
  export ASAN_OPTIONS="detect_container_overflow=0:detect_odr_violation=0:allow_user_poisoning=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  if [ "$mode" = test-long ]; then
    run_ctest "$san_dir" "$san_dir/ctest.log"
  else
    run_ctest "$san_dir" "$san_dir/ctest.log" -L inputs
  fi

  echo "== stage 3: libFuzzer targets, corpora and 30 s each"
  fuzz_status=0
  bash tools/fuzz.sh "$san_dir" 30 | tee "$san_dir/fuzz.log" || fuzz_status=$?
  fuzz=$(tail -1 "$san_dir/fuzz.log")
  passed=$((passed + $(echo "$fuzz" | grep -oE '^[0-9]+')))
  failed=$((failed + $(echo "$fuzz" | grep -oE '[0-9]+ failed' | grep -oE '^[0-9]+')))
  [ "$fuzz_status" -eq 0 ] || status=1
fi

echo "$passed passed, $failed failed"
exit $status
