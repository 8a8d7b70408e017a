//===- CudaEmulatorTest.cpp - hand-written kernels on the CUDA emulator ---===//
//
// The emulator's checks against kernels written to break CUDA's rules, in
// the NVPTX IR the CUDA target hands the emulator (an exchange of values
// through shared memory, a thread per element): one correct, one racy (no
// barrier between the write and the read), one writing past its buffer, one
// whose barrier only some threads reach; and the warp collectives through
// the whole path (the compiler's rewriting, the emulator's gathering of the
// lanes): butterfly shuffles, a ballot, an mma.sync, and a shuffle half the
// warp never reaches. What each collective computes is tested on its own in
// test/runtime/WarpCollectivesTest.cpp. Each is compiled by the compiler's
// emulator target, packaged as a module and run through the C API on the
// cuda-emulator device, as lcc-run does.
//
//===----------------------------------------------------------------------===//

#include "compiler/CudaEmulatorTarget.h"

#include "ArtifactBuilder.h"
#include "lcc/runtime.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace lcc;

namespace {

constexpr int64_t kThreads = 64;
constexpr int64_t kBlocks = 3;
constexpr int64_t kElements = kThreads * kBlocks;
/// Dynamic shared memory: a float per thread, or two warps' ldmatrix tiles.
constexpr int64_t kSharedBytes = 1536;

// Each block reverses its slice of x into y through shared memory:
// s[t] = x[b*n + t]; barrier; y[b*n + t] = s[n-1-t].
constexpr const char *kKernels = R"(
target triple = "nvptx64-nvidia-cuda"

@shared = external addrspace(3) global [0 x i8], align 16

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32)
declare i32 @llvm.nvvm.read.ptx.sreg.laneid()
declare float @llvm.nvvm.shfl.sync.bfly.f32(i32, float, i32, i32)
declare i32 @llvm.nvvm.vote.ballot.sync(i32, i1)
declare {float, float, float, float} @llvm.nvvm.mma.m16n8k16.row.col.bf16(i32, i32, i32, i32, i32, i32, float, float, float, float)

define ptx_kernel void @reverse(ptr %x, ptr %y) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %n = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %b = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %base = mul i32 %b, %n
  %i = add i32 %base, %t
  %i64 = zext i32 %i to i64
  %t64 = zext i32 %t to i64
  %xp = getelementptr float, ptr %x, i64 %i64
  %v = load float, ptr %xp
  %sp = getelementptr float, ptr addrspace(3) @shared, i64 %t64
  store float %v, ptr addrspace(3) %sp
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
REVERSED_STORE
  ret void
}

define ptx_kernel void @reverse_without_barrier(ptr %x, ptr %y) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %n = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %b = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %base = mul i32 %b, %n
  %i = add i32 %base, %t
  %i64 = zext i32 %i to i64
  %t64 = zext i32 %t to i64
  %xp = getelementptr float, ptr %x, i64 %i64
  %v = load float, ptr %xp
  %sp = getelementptr float, ptr addrspace(3) @shared, i64 %t64
  store float %v, ptr addrspace(3) %sp
REVERSED_STORE
  ret void
}

define ptx_kernel void @copy_one_past(ptr %x, ptr %y) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %n = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %b = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %base = mul i32 %b, %n
  %i = add i32 %base, %t
  %i64 = zext i32 %i to i64
  %xp = getelementptr float, ptr %x, i64 %i64
  %v = load float, ptr %xp
  %j = add i64 %i64, 1
  %yp = getelementptr float, ptr %y, i64 %j
  store float %v, ptr %yp
  ret void
}

define ptx_kernel void @barrier_in_half(ptr %x, ptr %y) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %low = icmp ult i32 %t, 32
  br i1 %low, label %wait, label %done
wait:
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  br label %done
done:
  %t64 = zext i32 %t to i64
  %xp = getelementptr float, ptr %x, i64 %t64
  %v = load float, ptr %xp
  %yp = getelementptr float, ptr %y, i64 %t64
  store float %v, ptr %yp
  ret void
}

; y[i] = the sum of x over i's warp, by butterfly shuffles.
define ptx_kernel void @warp_sum(ptr %x, ptr %y) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %n = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %b = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %base = mul i32 %b, %n
  %i = add i32 %base, %t
  %i64 = zext i32 %i to i64
  %xp = getelementptr float, ptr %x, i64 %i64
  %v0 = load float, ptr %xp
  %s1 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v0, i32 16, i32 31)
  %v1 = fadd float %v0, %s1
  %s2 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v1, i32 8, i32 31)
  %v2 = fadd float %v1, %s2
  %s3 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v2, i32 4, i32 31)
  %v3 = fadd float %v2, %s3
  %s4 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v3, i32 2, i32 31)
  %v4 = fadd float %v3, %s4
  %s5 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v4, i32 1, i32 31)
  %v5 = fadd float %v4, %s5
  %yp = getelementptr float, ptr %y, i64 %i64
  store float %v5, ptr %yp
  ret void
}

; y[i] = the low 16 bits of the ballot of the lanes whose x is even.
define ptx_kernel void @warp_ballot(ptr %x, ptr %y) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %n = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %b = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %base = mul i32 %b, %n
  %i = add i32 %base, %t
  %i64 = zext i32 %i to i64
  %xp = getelementptr float, ptr %x, i64 %i64
  %v = load float, ptr %xp
  %half = fmul float %v, 0.5
  %floor = call float @llvm.floor.f32(float %half)
  %even = fcmp oeq float %half, %floor
  %ballot = call i32 @llvm.nvvm.vote.ballot.sync(i32 -1, i1 %even)
  %low = and i32 %ballot, 65535
  %f = uitofp i32 %low to float
  %yp = getelementptr float, ptr %y, i64 %i64
  store float %f, ptr %yp
  ret void
}

declare float @llvm.floor.f32(float)
declare {i32, i32, i32, i32} @llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16(ptr addrspace(3))
declare {i32, i32} @llvm.nvvm.ldmatrix.sync.aligned.m8n8.x2.trans.b16(ptr addrspace(3))

; Every lane holds A = 1 and B = 2 (bf16 pairs) and c_k = k: each d_k is
; 32 + k. Warp w stores its d_(w % 4).
define ptx_kernel void @warp_mma(ptr %x, ptr %y) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %n = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %b = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %base = mul i32 %b, %n
  %i = add i32 %base, %t
  %d = call {float, float, float, float} @llvm.nvvm.mma.m16n8k16.row.col.bf16(i32 1065369472, i32 1065369472, i32 1065369472, i32 1065369472, i32 1073758208, i32 1073758208, float 0.0, float 1.0, float 2.0, float 3.0)
  %d0 = extractvalue {float, float, float, float} %d, 0
  %d1 = extractvalue {float, float, float, float} %d, 1
  %d2 = extractvalue {float, float, float, float} %d, 2
  %d3 = extractvalue {float, float, float, float} %d, 3
  %w = lshr i32 %i, 5
  %k = and i32 %w, 3
  %is1 = icmp eq i32 %k, 1
  %is2 = icmp eq i32 %k, 2
  %is3 = icmp eq i32 %k, 3
  %e1 = select i1 %is1, float %d1, float %d0
  %e2 = select i1 %is2, float %d2, float %e1
  %e3 = select i1 %is3, float %d3, float %e2
  %i64 = zext i32 %i to i64
  %yp = getelementptr float, ptr %y, i64 %i64
  store float %e3, ptr %yp
  ret void
}

; Lanes 0-15 shuffle with the whole warp's mask; lanes 16-31 never get
; there.
define ptx_kernel void @warp_shuffle_in_half(ptr %x, ptr %y) {
  %lane = call i32 @llvm.nvvm.read.ptx.sreg.laneid()
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %t to i64
  %xp = getelementptr float, ptr %x, i64 %t64
  %v = load float, ptr %xp
  %low = icmp ult i32 %lane, 16
  br i1 %low, label %shuffle, label %done
shuffle:
  %s = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v, i32 1, i32 31)
  br label %done
done:
  %r = phi float [ %s, %shuffle ], [ %v, %0 ]
  %yp = getelementptr float, ptr %y, i64 %t64
  store float %r, ptr %yp
  ret void
}

declare void @llvm.nvvm.cp.async.ca.shared.global.4(ptr addrspace(3), ptr addrspace(1))
declare void @llvm.nvvm.cp.async.commit.group()
declare void @llvm.nvvm.cp.async.wait.group(i32 immarg)

; The reversal of @reverse, its shared tile filled by cp.async and waited
; for before the barrier.
define ptx_kernel void @async_reverse(ptr %x, ptr %y) {
ASYNC_PROLOGUE
  call void @llvm.nvvm.cp.async.wait.group(i32 0)
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
REVERSED_STORE
  ret void
}

; The same, waiting for the copies only after reading the tile.
define ptx_kernel void @async_read_before_wait(ptr %x, ptr %y) {
ASYNC_PROLOGUE
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
REVERSED_STORE
  call void @llvm.nvvm.cp.async.wait.group(i32 0)
  ret void
}

; Copies never waited for.
define ptx_kernel void @async_never_waited(ptr %x, ptr %y) {
ASYNC_PROLOGUE
  ret void
}

; Two groups: x[i] to s[t], then x[i] to s[64 + t]; wait_group 1 completes
; the first only, so the second still reads as poison (NaN): y = x + 1000.
define ptx_kernel void @async_two_groups(ptr %x, ptr %y) {
ASYNC_PROLOGUE
  %t2 = add i64 %t64, 64
  %sp2 = getelementptr float, ptr addrspace(3) @shared, i64 %t2
  call void @llvm.nvvm.cp.async.ca.shared.global.4(ptr addrspace(3) %sp2, ptr addrspace(1) %xg)
  call void @llvm.nvvm.cp.async.commit.group()
  call void @llvm.nvvm.cp.async.wait.group(i32 1)
  %first = load float, ptr addrspace(3) %sp
  %second = load float, ptr addrspace(3) %sp2
  %pending = fcmp uno float %second, %second
  %mark = select i1 %pending, float 1000.0, float 0.0
  %v = fadd float %first, %mark
  %yp = getelementptr float, ptr %y, i64 %i64
  store float %v, ptr %yp
  call void @llvm.nvvm.cp.async.wait.group(i32 0)
  ret void
}

; A copy from 4 GiB past x, which no allocation holds.
define ptx_kernel void @async_from_nowhere(ptr %x, ptr %y) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %t to i64
  %far = add i64 %t64, 1073741824
  %xp = getelementptr float, ptr %x, i64 %far
  %xg = addrspacecast ptr %xp to ptr addrspace(1)
  %sp = getelementptr float, ptr addrspace(3) @shared, i64 %t64
  call void @llvm.nvvm.cp.async.ca.shared.global.4(ptr addrspace(3) %sp, ptr addrspace(1) %xg)
  call void @llvm.nvvm.cp.async.commit.group()
  call void @llvm.nvvm.cp.async.wait.group(i32 0)
  ret void
}
)";

/// Each warp stages A (16 x 16) and B (16 x 8) as bf16 in its 768 bytes of
/// the dynamic shared memory, lane l writing 8 elements of A and 4 of B,
/// then (after BARRIER: a barrier, or nothing) loads mma's fragments with
/// ldmatrix (x4 for A, x2.trans for B) and stores D = A B; warp w stores its
/// d_(w % 4).
constexpr const char *kLdMatrixKernel = R"(
define ptx_kernel void @NAME(ptr %x, ptr %y) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %n = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %blk = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %lane = and i32 %t, 31
  %w = lshr i32 %t, 5
  %wbase = mul i32 %w, 384
  %l8 = mul i32 %lane, 8
  %l4 = mul i32 %lane, 4
  br label %fillA
fillA:
  %i = phi i32 [ 0, %entry ], [ %i1, %fillA ]
  %e = add i32 %l8, %i
  %e7 = mul i32 %e, 7
  %m7 = urem i32 %e7, 11
  %s7 = sub i32 %m7, 5
  %f7 = sitofp i32 %s7 to float
  %b7 = bitcast float %f7 to i32
  %h7 = lshr i32 %b7, 16
  %v7 = trunc i32 %h7 to i16
  %ai = add i32 %wbase, %e
  %ai64 = zext i32 %ai to i64
  %ap0 = getelementptr i16, ptr addrspace(3) @shared, i64 %ai64
  store i16 %v7, ptr addrspace(3) %ap0
  %i1 = add i32 %i, 1
  %doneA = icmp eq i32 %i1, 8
  br i1 %doneA, label %fillB, label %fillA
fillB:
  %j = phi i32 [ 0, %fillA ], [ %j1, %fillB ]
  %f = add i32 %l4, %j
  %f5 = mul i32 %f, 5
  %m5 = urem i32 %f5, 7
  %s5 = sub i32 %m5, 3
  %g5 = sitofp i32 %s5 to float
  %b5 = bitcast float %g5 to i32
  %h5 = lshr i32 %b5, 16
  %v5 = trunc i32 %h5 to i16
  %bb = add i32 %wbase, 256
  %bi = add i32 %bb, %f
  %bi64 = zext i32 %bi to i64
  %bp0 = getelementptr i16, ptr addrspace(3) @shared, i64 %bi64
  store i16 %v5, ptr addrspace(3) %bp0
  %j1 = add i32 %j, 1
  %doneB = icmp eq i32 %j1, 4
  br i1 %doneB, label %load, label %fillB
load:
BARRIER
  %q = lshr i32 %lane, 3
  %r = and i32 %lane, 7
  %qlo = and i32 %q, 1
  %qhi = lshr i32 %q, 1
  %qlo8 = mul i32 %qlo, 8
  %arow = add i32 %r, %qlo8
  %arow16 = mul i32 %arow, 16
  %qhi8 = mul i32 %qhi, 8
  %aelem = add i32 %arow16, %qhi8
  %aidx = add i32 %wbase, %aelem
  %aidx64 = zext i32 %aidx to i64
  %ap = getelementptr i16, ptr addrspace(3) @shared, i64 %aidx64
  %a = call {i32, i32, i32, i32} @llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16(ptr addrspace(3) %ap)
  %l16 = and i32 %lane, 15
  %l16x8 = mul i32 %l16, 8
  %bidx0 = add i32 %wbase, 256
  %bidx = add i32 %bidx0, %l16x8
  %bidx64 = zext i32 %bidx to i64
  %bp = getelementptr i16, ptr addrspace(3) @shared, i64 %bidx64
  %b = call {i32, i32} @llvm.nvvm.ldmatrix.sync.aligned.m8n8.x2.trans.b16(ptr addrspace(3) %bp)
  %a0 = extractvalue {i32, i32, i32, i32} %a, 0
  %a1 = extractvalue {i32, i32, i32, i32} %a, 1
  %a2 = extractvalue {i32, i32, i32, i32} %a, 2
  %a3 = extractvalue {i32, i32, i32, i32} %a, 3
  %b0 = extractvalue {i32, i32} %b, 0
  %b1 = extractvalue {i32, i32} %b, 1
  %d = call {float, float, float, float} @llvm.nvvm.mma.m16n8k16.row.col.bf16(i32 %a0, i32 %a1, i32 %a2, i32 %a3, i32 %b0, i32 %b1, float 0.0, float 0.0, float 0.0, float 0.0)
  %d0 = extractvalue {float, float, float, float} %d, 0
  %d1 = extractvalue {float, float, float, float} %d, 1
  %d2 = extractvalue {float, float, float, float} %d, 2
  %d3 = extractvalue {float, float, float, float} %d, 3
  %base = mul i32 %blk, %n
  %gi = add i32 %base, %t
  %gw = lshr i32 %gi, 5
  %k = and i32 %gw, 3
  %is1 = icmp eq i32 %k, 1
  %is2 = icmp eq i32 %k, 2
  %is3 = icmp eq i32 %k, 3
  %e1 = select i1 %is1, float %d1, float %d0
  %e2 = select i1 %is2, float %d2, float %e1
  %e3 = select i1 %is3, float %d3, float %e2
  %gi64 = zext i32 %gi to i64
  %yp = getelementptr float, ptr %y, i64 %gi64
  store float %e3, ptr %yp
  ret void
}
)";

/// What each cp.async kernel starts with (ASYNC_PROLOGUE): thread t of
/// block b queues a copy of x[b n + t] to the shared word t, one group.
constexpr const char *kAsyncPrologue = R"(
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %n = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %b = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %base = mul i32 %b, %n
  %i = add i32 %base, %t
  %i64 = zext i32 %i to i64
  %t64 = zext i32 %t to i64
  %xp = getelementptr float, ptr %x, i64 %i64
  %xg = addrspacecast ptr %xp to ptr addrspace(1)
  %sp = getelementptr float, ptr addrspace(3) @shared, i64 %t64
  call void @llvm.nvvm.cp.async.ca.shared.global.4(ptr addrspace(3) %sp, ptr addrspace(1) %xg)
  call void @llvm.nvvm.cp.async.commit.group()
)";

/// How the reversal kernels end (REVERSED_STORE): thread t of block b
/// reads the shared word n - 1 - t and stores it to y[b n + t].
constexpr const char *kReversedStore = R"(
  %last = sub i32 %n, 1
  %r = sub i32 %last, %t
  %r64 = zext i32 %r to i64
  %rp = getelementptr float, ptr addrspace(3) @shared, i64 %r64
  %w = load float, ptr addrspace(3) %rp
  %yp = getelementptr float, ptr %y, i64 %i64
  store float %w, ptr %yp
)";

/// `text` with each `from` replaced by `to`.
std::string replaceAll(std::string text, const std::string &from,
                       const std::string &to) {
  for (size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

/// kKernels with its cp.async kernels' prologues and its reversals' ends,
/// and the ldmatrix kernel with and without its barrier.
std::string kernelsText() {
  std::string text = replaceAll(kKernels, "ASYNC_PROLOGUE\n",
                                std::string(kAsyncPrologue).substr(1));
  text = replaceAll(text, "REVERSED_STORE\n",
                    std::string(kReversedStore).substr(1));
  for (auto [name, barrier] :
       {std::pair<const char *, const char *>{
            "warp_ldmatrix_mma",
            "  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)"},
        {"warp_ldmatrix_without_barrier", ""}})
    text += replaceAll(replaceAll(kLdMatrixKernel, "@NAME(",
                                  std::string("@") + name + "("),
                       "BARRIER", barrier);
  return text;
}

/// The emulator's shared object of kKernels, compiled once.
const std::string &emulatorObject() {
  static const std::string object = [] {
    llvm::LLVMContext context;
    llvm::SMDiagnostic diagnostic;
    std::unique_ptr<llvm::Module> module =
        llvm::parseAssemblyString(kernelsText(), diagnostic, context);
    EXPECT_TRUE(module) << diagnostic.getMessage().str();
    std::string sharedObject;
    if (llvm::Error error =
            compileKernelsForEmulator(*module, nullptr, sharedObject))
      ADD_FAILURE() << llvm::toString(std::move(error));
    return sharedObject;
  }();
  return object;
}

/// A module whose function "main" runs `kernel` on x[kElements] into
/// y[kElements], kBlocks blocks of kThreads threads.
std::vector<uint8_t> kernelModule(const std::string &kernel) {
  test::ModuleSpec spec;
  test::FunctionSpec main;
  main.name = "main";
  main.inputs = {{"x", lcm::DType::F32, {kElements}, std::nullopt}};
  main.outputs = {{"y", lcm::DType::F32, {kElements}, std::nullopt}};
  uint64_t bytes = kElements * sizeof(float);
  main.buffers = {{lcm::BufferKind::Input, 0, bytes},
                  {lcm::BufferKind::Output, 0, bytes}};
  test::CommandSpec dispatch;
  dispatch.name = kernel;
  dispatch.workgroupCount = {uint32_t(kBlocks), 1, 1};
  dispatch.bindings = {{0, 0, bytes}, {1, 0, bytes}};
  main.commands = {dispatch};
  spec.functions = {main};
  test::ExecutableSpec executable;
  executable.format = lcm::ExecutableFormat::CudaEmulator;
  executable.target = "sm_90";
  executable.entryPoints = {
      {kernel, 2, {uint32_t(kThreads), 1, 1}, uint32_t(kSharedBytes),
       std::nullopt, std::nullopt}};
  executable.data.assign(emulatorObject().begin(), emulatorObject().end());
  spec.executables = {executable};
  return test::buildModule(spec);
}

struct KernelRun {
  std::string error; // "" when the call succeeded
  std::vector<float> y;
};

/// Runs `kernel` on x = 0, 1, 2, ... with the given checks and order.
KernelRun runKernel(const std::string &kernel, const char *checks,
        const char *order = "forward") {
  std::vector<uint8_t> bytes = kernelModule(kernel);
  KernelRun result;
  LccModule module = nullptr;
  LccDevice device = nullptr;
  LccSession session = nullptr;
  LccFunction function = nullptr;
  auto take = [&](LccStatus status) {
    if (!status)
      return false;
    result.error = lccStatusGetMessage(status);
    lccStatusDestroy(status);
    return true;
  };
  std::vector<float> x(kElements);
  for (int64_t i = 0; i < kElements; ++i)
    x[i] = float(i);
  int64_t shape[] = {kElements};
  LccTensorView input = {nullptr, LCC_DTYPE_F32, 1, shape, x.data(),
                         x.size() * sizeof(float)};
  if (!take(lccModuleLoadMemory(bytes.data(), bytes.size(), &module)) &&
      !take(lccDeviceCreate("cuda-emulator", 0, &device)) &&
      !take(lccDeviceSetEmulatorChecks(device, checks, order)) &&
      !take(lccSessionCreate(device, module, &session)) &&
      !take(lccSessionLookupFunction(session, "main", &function)) &&
      !take(lccFunctionCall(function, &input, 1))) {
    LccTensorView output;
    lccFunctionGetResult(function, 0, &output);
    const auto *values = static_cast<const float *>(output.data);
    result.y.assign(values, values + kElements);
  }
  lccSessionDestroy(session);
  lccDeviceDestroy(device);
  lccModuleDestroy(module);
  return result;
}

std::vector<float> reversedBlocks() {
  std::vector<float> y(kElements);
  for (int64_t b = 0; b < kBlocks; ++b)
    for (int64_t t = 0; t < kThreads; ++t)
      y[b * kThreads + t] = float(b * kThreads + kThreads - 1 - t);
  return y;
}

TEST(CudaEmulator, RunsACorrectKernelInEveryThreadOrder) {
  for (const char *order : {"forward", "reversed", "shuffled:3"}) {
    KernelRun result = runKernel("reverse", "memcheck,racecheck", order);
    EXPECT_EQ(result.error, "") << order;
    EXPECT_EQ(result.y, reversedBlocks()) << order;
  }
}

TEST(CudaEmulator, RacecheckFindsTheMissingBarrier) {
  KernelRun result = runKernel("reverse_without_barrier", "racecheck");
  // In the forward order thread 32 reads the word thread 31 wrote (read
  // after write), then writes the word thread 31 read (write after read):
  // two classes, a line each, for 32 pairs in each of the 3 blocks.
  EXPECT_EQ(result.error,
            "racecheck: read-after-write hazard on shared memory byte 124 in "
            "kernel 'reverse_without_barrier', block (0,0,0): thread (31,0,0) "
            "(store #6) and thread (32,0,0) (load #7) with no barrier between "
            "(96 occurrences)\n"
            "racecheck: write-after-read hazard on shared memory byte 128 in "
            "kernel 'reverse_without_barrier', block (0,0,0): thread (31,0,0) "
            "(load #7) and thread (32,0,0) (store #6) with no barrier between "
            "(96 occurrences)");
  // Unchecked, the forward order reads what no thread wrote yet: poison.
  KernelRun unchecked = runKernel("reverse_without_barrier", "none");
  EXPECT_EQ(unchecked.error, "");
  EXPECT_NE(unchecked.y, reversedBlocks());
}

TEST(CudaEmulator, MemcheckFindsTheWriteOnePastTheBuffer) {
  KernelRun result = runKernel("copy_one_past", "memcheck");
  ASSERT_NE(result.error.find("memcheck: invalid store of 4 bytes at 0x"),
            std::string::npos)
      << result.error;
  EXPECT_NE(result.error.find(" in kernel 'copy_one_past', block (2,0,0) "
                              "thread (63,0,0): 0 bytes past the end of "
                              "binding 1 (768 bytes); store #1"),
            std::string::npos)
      << result.error;
  EXPECT_EQ(result.error.find('\n'), std::string::npos) << result.error;
}

TEST(CudaEmulator, ReportsABarrierHalfTheBlockNeverReaches) {
  KernelRun result = runKernel("barrier_in_half", "none");
  EXPECT_EQ(result.error,
            "synccheck: divergent barrier in kernel 'barrier_in_half', block "
            "(0,0,0) of 64 threads: threads 0-31 wait at the barrier #13; "
            "threads 32-63 exited without reaching it (3 occurrences)");
}

TEST(CudaEmulator, RunsButterflyShufflesInEveryThreadOrder) {
  std::vector<float> sums(kElements);
  for (int64_t i = 0; i < kElements; ++i)
    sums[i] = float(1024 * (i / 32) + 496);
  for (const char *order : {"forward", "reversed", "shuffled:5"}) {
    KernelRun result = runKernel("warp_sum", "memcheck,racecheck", order);
    EXPECT_EQ(result.error, "") << order;
    EXPECT_EQ(result.y, sums) << order;
  }
}

TEST(CudaEmulator, RunsABallot) {
  KernelRun result = runKernel("warp_ballot", "memcheck,racecheck");
  EXPECT_EQ(result.error, "");
  EXPECT_EQ(result.y, std::vector<float>(kElements, float(0x5555)));
}

TEST(CudaEmulator, RunsAnMmaSync) {
  KernelRun result = runKernel("warp_mma", "memcheck,racecheck", "shuffled:2");
  EXPECT_EQ(result.error, "");
  std::vector<float> expected(kElements);
  for (int64_t i = 0; i < kElements; ++i)
    expected[i] = float(32 + (i / 32) % 4);
  EXPECT_EQ(result.y, expected);
}

/// What warp_ldmatrix_mma stores: A[r][k] = (7 (16 r + k)) % 11 - 5,
/// B[k][n] = (5 (8 k + n)) % 7 - 3, D = A B; warp w's lane l stores d_(w % 4)
/// at its place in the PTX ISA's C/D layout.
std::vector<float> ldmatrixProducts() {
  int a[16][16], b[16][8];
  for (int r = 0; r < 16; ++r)
    for (int k = 0; k < 16; ++k)
      a[r][k] = (7 * (16 * r + k)) % 11 - 5;
  for (int k = 0; k < 16; ++k)
    for (int n = 0; n < 8; ++n)
      b[k][n] = (5 * (8 * k + n)) % 7 - 3;
  std::vector<float> y(kElements);
  for (int64_t i = 0; i < kElements; ++i) {
    int lane = int(i % 32), d = int((i / 32) % 4);
    int row = lane / 4 + 8 * (d / 2), col = 2 * (lane % 4) + d % 2;
    int sum = 0;
    for (int k = 0; k < 16; ++k)
      sum += a[row][k] * b[k][col];
    y[i] = float(sum);
  }
  return y;
}

TEST(CudaEmulator, RunsLdMatrixIntoAnMmaSync) {
  for (const char *order : {"forward", "shuffled:7"}) {
    KernelRun result =
        runKernel("warp_ldmatrix_mma", "memcheck,racecheck", order);
    EXPECT_EQ(result.error, "") << order;
    EXPECT_EQ(result.y, ldmatrixProducts()) << order;
  }
}

TEST(CudaEmulator, RacecheckFindsAnLdMatrixBeforeTheBarrier) {
  KernelRun result = runKernel("warp_ldmatrix_without_barrier", "racecheck");
  EXPECT_NE(result.error.find("racecheck: read-after-write hazard on shared "
                              "memory byte"),
            std::string::npos)
      << result.error;
  EXPECT_NE(result.error.find("(the warp collective ldmatrix.x4 #"),
            std::string::npos)
      << result.error;
}

TEST(CudaEmulator, RunsCpAsyncCopiesWaitedForBeforeTheBarrier) {
  for (const char *order : {"forward", "reversed", "shuffled:3"}) {
    KernelRun result = runKernel("async_reverse", "memcheck,racecheck", order);
    EXPECT_EQ(result.error, "") << order;
    EXPECT_EQ(result.y, reversedBlocks()) << order;
  }
}

TEST(CudaEmulator, CpAsyncCopiesHappenWhenTheirGroupIsWaitedFor) {
  KernelRun result = runKernel("async_two_groups", "memcheck,racecheck");
  EXPECT_EQ(result.error, "");
  std::vector<float> expected(kElements);
  for (int64_t i = 0; i < kElements; ++i)
    expected[i] = float(i) + 1000.0f;
  EXPECT_EQ(result.y, expected);
}

TEST(CudaEmulator, RacecheckFindsATileReadBeforeItsCopiesAreWaitedFor) {
  KernelRun result = runKernel("async_read_before_wait", "racecheck");
  EXPECT_NE(result.error.find("racecheck: write-after-read hazard on shared "
                              "memory byte"),
            std::string::npos)
      << result.error;
  EXPECT_NE(result.error.find("(cp.async #"), std::string::npos)
      << result.error;
}

TEST(CudaEmulator, MemcheckFindsACpAsyncFromOutsideEveryBuffer) {
  KernelRun result = runKernel("async_from_nowhere", "memcheck");
  EXPECT_NE(result.error.find("memcheck: invalid cp.async of 4 bytes from 0x"),
            std::string::npos)
      << result.error;
  EXPECT_NE(result.error.find("in kernel 'async_from_nowhere', block (0,0,0) "
                              "thread (0,0,0): the source is in none of the "
                              "kernel's buffers; cp.async #"),
            std::string::npos)
      << result.error;
}

TEST(CudaEmulator, ReportsCpAsyncCopiesNeverWaitedFor) {
  KernelRun result = runKernel("async_never_waited", "none");
  EXPECT_NE(result.error.find(
                "synccheck: block (0,0,0) thread (0,0,0) of kernel "
                "'async_never_waited' ended with 1 cp.async copies it never "
                "waited for (the first: cp.async #"),
            std::string::npos)
      << result.error;
  EXPECT_NE(result.error.find("(192 occurrences)"), std::string::npos)
      << result.error;
}

TEST(CudaEmulator, ReportsAShuffleHalfTheWarpNeverReaches) {
  KernelRun result = runKernel("warp_shuffle_in_half", "none");
  EXPECT_NE(result.error.find(
                "synccheck: divergent warp collective in kernel "
                "'warp_shuffle_in_half', block (0,0,0): thread 0 waits at "
                "the warp collective shfl.bfly #"),
            std::string::npos)
      << result.error;
  EXPECT_NE(result.error.find("with member mask 0xffffffff; threads 16-31 of "
                              "the mask are not there (ended, elsewhere or "
                              "beyond the block) (3 occurrences)"),
            std::string::npos)
      << result.error;
}

} // namespace

TEST(CudaEmulator, RefusesAnIntrinsicItDoesNotRun) {
  llvm::LLVMContext context;
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::Module> module = llvm::parseAssemblyString(R"(
target triple = "nvptx64-nvidia-cuda"
declare void @llvm.nvvm.bar.warp.sync(i32)
define ptx_kernel void @wait(ptr %y) {
  call void @llvm.nvvm.bar.warp.sync(i32 -1)
  ret void
}
)",
                                                                   diagnostic,
                                                                   context);
  ASSERT_TRUE(module) << diagnostic.getMessage().str();
  std::string sharedObject;
  llvm::Error error = compileKernelsForEmulator(*module, nullptr, sharedObject);
  ASSERT_TRUE(bool(error));
  EXPECT_EQ(llvm::toString(std::move(error)),
            "kernel 'wait' calls llvm.nvvm.bar.warp.sync, which the CUDA "
            "emulator does not run");
}
