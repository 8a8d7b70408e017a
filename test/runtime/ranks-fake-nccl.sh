#!/bin/sh
# ranks-fake-nccl.sh LCM-TESTGEN LCC-RUN LCC-COMPARE FAKE-DRIVER FAKE-NCCL
#
# A job of two ranks on the cuda device reduces its memory with NCCL, on
# the fake driver (FakeCudaDriver.c) and the fake NCCL (FakeNccl.c, which
# carries the reduction over MPI and logs each call): lcm-testgen's
# reduce.lcm (TestModules.h) gives the same results as on the CPU's ranks,
# and every range went through ncclAllReduce, not the host; exchange.lcm's
# all-to-all and ring shift, through ncclSend and ncclRecv. NCCL missing is
# the failing rank's error line naming the library; one process never
# loads it. Exits 77 (skipped) without mpirun.
set -u
testgen=$1 run=$2 compare=$3 fake=$4 nccl=$5
command -v mpirun > /dev/null || { echo "no mpirun"; exit 77; }
dir=ranks-fake-nccl.d
rm -rf "$dir" && mkdir -p "$dir" && "$testgen" "$dir" > /dev/null || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_rmaps_base_oversubscribe=1
status=0

# expect NAME PATTERN FILE: FILE holds PATTERN (a fixed string).
expect() {
  if ! grep -qF -- "$2" "$3"; then
    echo "FAIL $1: expected '$2' in:" && cat "$3"
    status=1
  fi
}

mpirun -np 2 "$run" "$dir/reduce.lcm" --input="$dir/x4x16.npy" \
  --output-dir="$dir/cpu" > "$dir/cpu.txt" 2>&1 || { cat "$dir/cpu.txt"; exit 1; }
mpirun -np 2 env LCC_CUDA_DRIVER="$fake" LCC_NCCL_LIBRARY="$nccl" \
  LCC_FAKE_NCCL_LOG="$dir/nccl.log" "$run" "$dir/reduce.lcm" --device=cuda \
  --input="$dir/x4x16.npy" --output-dir="$dir/cuda" > "$dir/cuda.txt" 2>&1 ||
  { echo "FAIL nccl: the job failed:"; cat "$dir/cuda.txt"; exit 1; }
"$compare" "$dir/cuda/result0.npy" "$dir/cpu/result0.npy" --rtol=0 ||
  { echo "FAIL nccl: results differ from the CPU's ranks"; status=1; }
# Rows 0-1 are the ranks' mean of one x: x itself; rows 2-3 are not.
"$compare" "$dir/cuda/result0.npy" "$dir/x4x16.npy" --rows=0:2 --rtol=0 ||
  { echo "FAIL nccl: the mean of equal rows is not the row"; status=1; }
if "$compare" "$dir/cuda/result0.npy" "$dir/x4x16.npy" --rows=2:4 --rtol=0 \
    > /dev/null 2>&1; then
  echo "FAIL nccl: the sum left rows 2-3 as they were"
  status=1
fi
for rank in 0 1; do
  expect nccl-mean "rank $rank of 2: ncclAllReduce 32 floats avg" "$dir/nccl.log"
  expect nccl-sum "rank $rank of 2: ncclAllReduce 16 floats sum" "$dir/nccl.log"
done

# NCCL missing: the rank names itself and the library, and the job ends.
if mpirun -np 2 env LCC_CUDA_DRIVER="$fake" \
    LCC_NCCL_LIBRARY="$dir/no-such-nccl.so" "$run" "$dir/reduce.lcm" \
    --device=cuda --input="$dir/x4x16.npy" --output-dir="$dir/missing" \
    > "$dir/missing.txt" 2>&1; then
  echo "FAIL missing: the job succeeded without NCCL"
  status=1
fi
expect missing "lcc-run: error: rank " "$dir/missing.txt"
expect missing "nccl unavailable: cannot load $dir/no-such-nccl.so, named by LCC_NCCL_LIBRARY" "$dir/missing.txt"

# One process reduces over itself alone: NCCL is never loaded.
LCC_CUDA_DRIVER="$fake" LCC_NCCL_LIBRARY="$dir/no-such-nccl.so" "$run" \
  "$dir/reduce.lcm" --device=cuda --input="$dir/x4x16.npy" \
  --output-dir="$dir/alone" > "$dir/alone.txt" 2>&1 ||
  { echo "FAIL alone:"; cat "$dir/alone.txt"; status=1; }

# Exchanges (exchange.lcm: an all-to-all of 2 blocks and a ring shift) are
# NCCL's grouped sends and receives, as the CPU's ranks compute them with
# MPI: block 1 of the all-to-all is rank 1's block 0, here rank 0's too.
mpirun -np 2 "$run" "$dir/exchange.lcm" --input="$dir/x4x16.npy" \
  --output-dir="$dir/cpu-exchange" > "$dir/cpu-exchange.txt" 2>&1 ||
  { cat "$dir/cpu-exchange.txt"; exit 1; }
mpirun -np 2 env LCC_CUDA_DRIVER="$fake" LCC_NCCL_LIBRARY="$nccl" \
  LCC_FAKE_NCCL_LOG="$dir/exchange.log" "$run" "$dir/exchange.lcm" \
  --device=cuda --input="$dir/x4x16.npy" --output-dir="$dir/cuda-exchange" \
  > "$dir/cuda-exchange.txt" 2>&1 ||
  { echo "FAIL exchange: the job failed:"; cat "$dir/cuda-exchange.txt"; exit 1; }
for result in result0 result1; do
  "$compare" "$dir/cuda-exchange/$result.npy" "$dir/cpu-exchange/$result.npy" \
    --rtol=0 || { echo "FAIL exchange: $result differs from the CPU's"; status=1; }
done
"$compare" "$dir/cuda-exchange/result0.npy" "$dir/x4x16.npy" --rows=0:2 \
  --rtol=0 || { echo "FAIL exchange: block 0 is not rank 0's own"; status=1; }
"$compare" "$dir/cuda-exchange/result1.npy" "$dir/x4x16.npy" --rtol=0 ||
  { echo "FAIL exchange: the ring gave back another tensor"; status=1; }
for rank in 0 1; do
  expect exchange-a2a "rank $rank of 2: ncclSend 128 bytes" "$dir/exchange.log"
  expect exchange-ring "rank $rank of 2: ncclRecv 256 bytes" "$dir/exchange.log"
done

[ "$status" -eq 0 ] && echo "ranks-fake-nccl: ok"
exit "$status"
