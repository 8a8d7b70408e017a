//===- CudaEmulatorAbi.h - the kernels of a CudaEmulator executable -*- C++ -*-===//
//
// A CudaEmulator executable (lcm.fbs) is an x86-64 shared object holding the
// CUDA kernels of the module: the NVVM IR that became the PTX, with every
// special register read from, and every barrier and checked memory access
// called through, the ThreadContext of the thread that runs it. The compiler
// writes this ABI (compiler/CudaEmulatorTarget.cpp), the runtime's emulator
// runs it (runtime/src/devices/cuda/CudaEmulator.cpp); both take it from here.
//
// Each kernel K of the module is exported as
//
//   void lcc_emu_kernel_K(ThreadContext *thread, void *const *parameters)
//
// where parameters[i] points at the value of the kernel's parameter i, as
// cuLaunchKernel's kernelParams do. Each global or shared access of site S
// first compares its bytes with siteRanges[S] and calls `access` only when
// they are not inside (unchecked, every range is the whole address space). A
// thread of a block runs it from start to end on a stack of its own;
// `barrier` returns once every thread of the block has reached a barrier,
// and `warp` once every lane of the member mask has reached the same warp
// collective (shfl.sync, vote.sync, mma.sync), with this lane's result.
// `asyncCopy` queues, groups and completes the thread's cp.async copies.
//
// `lcc_emu_access_sites` is a NUL-terminated text with one line per memory
// access and barrier of the object (and a first line `shared-static BYTES`,
// the static shared memory before the dynamic), whose index is what `access`
// and `barrier` receive:
//
//   access <kernel> <load|store|atomic> <bytes> <space> <location>
//   barrier <kernel> <location>
//   warp <kernel> <operation> <location>
//   async <kernel> copy <bytes> <location>
//   async <kernel> <commit|wait> <location>
//
// <operation> is a WarpOperation's name (kWarpOperationNames).
// <space> is `param:N` (the buffer of kernel parameter N), `shared`,
// `global:NAME` (a module global of `size` bytes, e.g. a scratch array) or
// `unknown` (the compiler could not tell which buffer the address is in).
// <location> is the model source position the access came from, or `-`.
// `lcc_emu_globals` lists `NAME SIZE` lines for every global a kernel may
// access, for cuModuleGetGlobal and the checks.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_SCHEMA_CUDAEMULATORABI_H
#define LCC_RUNTIME_SCHEMA_CUDAEMULATORABI_H

#include <cstddef>
#include <cstdint>

namespace lcc::lcm::emulator {

struct ThreadContext;

/// The bytes an access site may touch, [begin, end): a checked access
/// inside them goes ahead without a call; an empty range sends every access
/// of the site to `access` (racecheck follows shared memory that way).
struct SiteRange {
  const uint8_t *begin;
  const uint8_t *end;
};

/// Returns where the access at `address` of site `site` goes: `address` itself,
/// or, when the check found it outside its buffer, a scratch area the
/// finding has been recorded for (so the kernel runs on and the process
/// never faults).
using AccessFunction = void *(*)(ThreadContext *thread, void *address,
                                 uint32_t site);
using BarrierFunction = void (*)(ThreadContext *thread, uint32_t site);

/// The warp collectives, each `warp` site one of them. The words a lane
/// passes in and gets out (each a 32-bit register, floats as their bits):
///   shfl.*: in {a, b, c} (value, lane operand, clamp and segment mask as
///           PTX's shfl.sync packs them); out {d, p}.
///   vote.*: in {predicate}; out {result} (ballot: the lanes' bits).
///   mma.m16n8k16.*: in {a0..a3, b0, b1, c0..c3} (A's and B's fragments of
///           two 16-bit values a register, C's of f32), out {d0..d3}, in
///           the PTX ISA's fragment layouts for row-major A, column-major B.
///   mma.m16n8k8.tf32: the same registers, one tf32 value each.
///   ldmatrix.*: in {address bits 0-31, 32-63} (of the lane's row in shared
///           memory, 8 16-bit values; lanes 8i-8i+7 give matrix i's rows),
///           out one register per matrix. Its site is also a 16-byte
///           shared load of each row, which memcheck and racecheck see.
enum WarpOperation : uint32_t {
  kShuffleUp,
  kShuffleDown,
  kShuffleButterfly,
  kShuffleIndex,
  kVoteAll,
  kVoteAny,
  kVoteUniform,
  kVoteBallot,
  kMmaM16N8K16BF16,
  kMmaM16N8K16F16,
  kMmaM16N8K8TF32,
  kLdMatrixX1,
  kLdMatrixX2,
  kLdMatrixX4,
  kLdMatrixX1Trans,
  kLdMatrixX2Trans,
  kLdMatrixX4Trans,
  kWarpOperationCount,
};

inline constexpr const char *kWarpOperationNames[kWarpOperationCount] = {
    "shfl.up",  "shfl.down", "shfl.bfly",   "shfl.idx",
    "vote.all", "vote.any",  "vote.uni",    "vote.ballot",
    "mma.m16n8k16.bf16", "mma.m16n8k16.f16", "mma.m16n8k8.tf32",
    "ldmatrix.x1", "ldmatrix.x2", "ldmatrix.x4",
    "ldmatrix.x1.trans", "ldmatrix.x2.trans", "ldmatrix.x4.trans"};

/// Whether `operation` is an ldmatrix (a warp collective that reads shared
/// memory).
inline bool isLdMatrix(WarpOperation operation) {
  return operation >= kLdMatrixX1 && operation <= kLdMatrixX4Trans;
}

/// Words in and out of a warp collective, at most.
constexpr unsigned kWarpWordsIn = 10;
constexpr unsigned kWarpWordsOut = 4;

/// Performs the warp collective of site `site` with the lanes of
/// `memberMask`: returns once all of them have reached it, `out` holding
/// this lane's result.
using WarpFunction = void (*)(ThreadContext *thread, uint32_t site,
                              uint32_t memberMask, const uint32_t *in,
                              uint32_t *out);

/// The thread's cp.async of site `site`: a `copy` queues its bytes (the
/// site's) from `source` (global) to `destination` (shared), `count` of
/// them read and the rest zero-filled; a `commit` closes the thread's open
/// group of copies; a `wait` completes every group but the `count` most
/// recent (`kWaitAll`: every copy, the open group's too).
using AsyncCopyFunction = void (*)(ThreadContext *thread, uint32_t site,
                                   void *destination, const void *source,
                                   uint32_t count);
constexpr uint32_t kWaitAll = ~0u;

/// What a kernel reads of the thread running it. The compiler addresses the
/// fields by the offsets asserted below.
struct ThreadContext {
  uint32_t threadId[3];    // %tid
  uint32_t blockDim[3];    // %ntid
  uint32_t blockId[3];     // %ctaid
  uint32_t gridDim[3];     // %nctaid
  uint8_t *sharedMemory;   // the block's shared memory, static then dynamic
  uint32_t laneId;         // %laneid
  uint32_t reserved;
  AccessFunction access;
  BarrierFunction barrier;
  void *emulator;          // the runtime's, opaque to kernels
  const SiteRange *siteRanges; // one per access site of the module
  // Racecheck's filter, one tag per 4-byte word of shared memory: an aligned
  // 4-byte access of a word whose tag is the thread's ownerTag (this thread
  // wrote all of it and no other touched it, this barrier interval), or a
  // load of one whose tag is readersTag (several threads read all of it and
  // none wrote it), cannot race and needs no call. filterWords is 0 when
  // racecheck is off; raceFilter always has a word.
  const uint64_t *raceFilter;
  uint64_t ownerTag;
  uint64_t readersTag;
  uint64_t filterWords;
  WarpFunction warp;
  AsyncCopyFunction asyncCopy;
};

static_assert(offsetof(ThreadContext, threadId) == 0, "ABI");
static_assert(offsetof(ThreadContext, blockDim) == 12, "ABI");
static_assert(offsetof(ThreadContext, blockId) == 24, "ABI");
static_assert(offsetof(ThreadContext, gridDim) == 36, "ABI");
static_assert(offsetof(ThreadContext, sharedMemory) == 48, "ABI");
static_assert(offsetof(ThreadContext, laneId) == 56, "ABI");
static_assert(offsetof(ThreadContext, access) == 64, "ABI");
static_assert(offsetof(ThreadContext, barrier) == 72, "ABI");
static_assert(offsetof(ThreadContext, siteRanges) == 88, "ABI");
static_assert(offsetof(ThreadContext, raceFilter) == 96, "ABI");
static_assert(offsetof(ThreadContext, ownerTag) == 104, "ABI");
static_assert(offsetof(ThreadContext, readersTag) == 112, "ABI");
static_assert(offsetof(ThreadContext, filterWords) == 120, "ABI");
static_assert(offsetof(ThreadContext, warp) == 128, "ABI");
static_assert(offsetof(ThreadContext, asyncCopy) == 136, "ABI");
static_assert(sizeof(ThreadContext) == 144, "ABI");
static_assert(sizeof(SiteRange) == 16, "ABI");

/// Field indices of ThreadContext as an LLVM struct
/// { [3 x i32], [3 x i32], [3 x i32], [3 x i32], ptr, i32, i32, ptr, ptr, ptr,
///   ptr, ptr, i64, i64, i64, ptr, ptr }.
enum ThreadContextField : unsigned {
  kThreadIdField = 0,
  kBlockDimField = 1,
  kBlockIdField = 2,
  kGridDimField = 3,
  kSharedMemoryField = 4,
  kLaneIdField = 5,
  kAccessField = 7,
  kBarrierField = 8,
  kSiteRangesField = 10,
  kRaceFilterField = 11,
  kOwnerTagField = 12,
  kReadersTagField = 13,
  kFilterWordsField = 14,
  kWarpField = 15,
  kAsyncCopyField = 16,
};

inline constexpr const char *kKernelPrefix = "lcc_emu_kernel_";
inline constexpr const char *kSitesSymbol = "lcc_emu_access_sites";
inline constexpr const char *kGlobalsSymbol = "lcc_emu_globals";

} // namespace lcc::lcm::emulator

#endif // LCC_RUNTIME_SCHEMA_CUDAEMULATORABI_H
