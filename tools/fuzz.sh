#!/usr/bin/env bash
# Runs lcc's libFuzzer targets (test/fuzz/), built with -DLCC_BUILD_FUZZERS=ON
# (tools/build.sh test builds them in build-sanitize/, with ASan and UBSan):
#
#   bash tools/fuzz.sh [BUILD_DIR] [SECONDS]     default build-sanitize, 30
#
# For each target: replays its seed corpus (test/fuzz/corpus/<target>/; the
# model fuzzer's corpus is every .mlir model and e2e test of the repository),
# then fuzzes it for SECONDS, starting from that corpus. CI runs 30 s a
# target; give more for a longer run (e.g. 3600). A crash, leak, timeout or
# sanitizer report is a finding: its input is kept in BUILD_DIR/fuzz-findings/
# and the script fails. The targets run side by side, one per core (each is
# one process on one thread); each one's lines are printed together when it
# ends. The last line is "N passed, N failed".
set -uo pipefail

cd "$(dirname "$0")/.."
build="${1:-build-sanitize}"
seconds="${2:-30}"
bin="$build/fuzz"
findings="$build/fuzz-findings"
mkdir -p "$findings"

# The compiler's libraries are not instrumented (Debian's MLIR/LLVM) and keep
# global registries alive until exit: container checks and leak reports
# across that boundary are noise there, not findings.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_container_overflow=0:detect_odr_violation=0:allow_user_poisoning=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

# run_target TARGET CORPUS [FLAGS]: prints what it did; its status is the
# verdict.
run_target() {
  local target="$1" corpus="$2" extra="${3:-}"
  local work status
  work=$(mktemp -d)
  cp -r "$corpus"/. "$work/"
  echo "== $target: replay $(ls "$work" | wc -l) seeds, then fuzz ${seconds}s"
  local log="$build/fuzz-$target.log"
  # shellcheck disable=SC2086
  if "$bin/$target" -runs=0 $extra "$work" >"$log" 2>&1 &&
    "$bin/$target" -max_total_time="$seconds" -print_final_stats=1 \
      -artifact_prefix="$findings/$target-" -timeout=60 -rss_limit_mb=4096 \
      $extra "$work" >>"$log" 2>&1; then
    local runs
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" |
      grep -o '[0-9]*$' | tail -1)
    echo "   ${runs:-?} executions, no findings"
    status=0
  else
    echo "   FINDING: see $log and $findings/"
    grep -m5 -E 'ERROR|SUMMARY|runtime error|deadly signal' "$log" | sed 's/^/   /'
    status=1
  fi
  rm -rf "$work"
  return $status
}

models=$(mktemp -d)
cp models/*.mlir "$models/"
for f in models/masks/*.mlir; do cp "$f" "$models/masks-$(basename "$f")"; done
for f in test/e2e/*.mlir test/e2e/Inputs/*.mlir; do
  cp "$f" "$models/e2e-$(basename "$f")"
done
# The model fuzzer first: it replays the most.
targets=(LoaderFuzzer NpyFuzzer SafetensorsFuzzer)
[ -x "$bin/ModelFuzzer" ] && targets=(ModelFuzzer "${targets[@]}")

outputs=$(mktemp -d)
jobs=$(nproc)
running=0
for target in "${targets[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n
    running=$((running - 1))
  fi
  (
    if [ "$target" = ModelFuzzer ]; then
      # Leaks in MLIR's global state at exit are not the model's.
      ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" run_target ModelFuzzer "$models"
    else
      run_target "$target" "test/fuzz/corpus/$target"
    fi
    echo $? >"$outputs/$target.status"
  ) >"$outputs/$target.out" 2>&1 &
  running=$((running + 1))
done
wait

passed=0
failed=0
for target in "${targets[@]}"; do
  cat "$outputs/$target.out"
  if [ "$(cat "$outputs/$target.status" 2>/dev/null)" = 0 ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
done
rm -rf "$models" "$outputs"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
