//===- KernelReport.cpp - what each CUDA kernel costs, statically ---------===//

#include "compiler/KernelReport.h"
#include "compiler/CudaArch.h"
#include "compiler/DispatchBuffers.h"
#include "compiler/TensorCoreContractions.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace lcc;

namespace {

/// The archs whose occupancy every report shows, whatever it targets.
const CudaArch &reportedArch(llvm::StringRef name) {
  const CudaArch *arch = findCudaArch(name);
  assert(arch && "a reported arch is in the table");
  return *arch;
}

/// Published peaks of the GPUs the roofline is drawn for: FP32 on CUDA
/// cores, dense bf16 on tensor cores and HBM bandwidth, SXM parts
/// (NVIDIA's H100 and H200 datasheets), and the shared-memory instructions
/// their 132 SMs issue, one warp-wide access an SM per clock at the 1.83
/// GHz the tensor peak is quoted at (989.4 TFLOP/s = 132 SMs x 4096
/// FLOP/clock x 1.83 GHz).
struct GpuPeaks {
  llvm::StringLiteral name;
  double flops;              // FP32 per second
  double tensorFlops;        // bf16 dense per second
  double tf32Flops;          // tf32 dense per second
  double bytes;              // per second
  double sharedInstructions; // warp-wide shared-memory accesses per second
};
constexpr double kHopperSharedInstructions = 132 * 1.83e9;
constexpr GpuPeaks kH100 = {"h100", 67e12,   989e12,
                            494e12, 3.35e12, kHopperSharedInstructions};
constexpr GpuPeaks kH200 = {"h200", 67e12,  989e12,
                            494e12, 4.8e12, kHopperSharedInstructions};

/// FlashAttention's published H100 SXM forward and backward speeds (fp16,
/// TFLOP/s, sequence 512 to 16K; the FA3 paper's figures, FLOPs counted as
/// 4 B H S^2 D forward, halved causal, backward 2.5 times the forward):
/// what the users of an attention compiler compare with.
constexpr llvm::StringLiteral kPublishedAttention =
    "FlashAttention on H100 (fp16, TFLOP/s, seq 512-16K; FA3 paper): "
    "forward d64 FA2 282-324, FA3 333-497; d128 FA2 309-370, FA3 467-648; "
    "d128 causal FA2 191-335, FA3 292-616; backward d128 FA2 214-322, FA3 "
    "316-561";

struct Occupancy {
  double fraction = 0;
  int64_t blocksPerSm = 0;
  const char *limit = "threads";
};

Occupancy occupancy(const CudaArch &sm, const KernelReportEntry &entry) {
  int64_t warps = (entry.threads + 31) / 32;
  Occupancy result;
  result.blocksPerSm = blocksPerSmByThreads(sm, entry.threads);
  result.limit = result.blocksPerSm == sm.maxBlocksPerSm ? "blocks" : "threads";
  int64_t bySmem =
      blocksPerSmBySharedMemory(sm, entry.threads, entry.sharedMemoryBytes);
  if (bySmem < result.blocksPerSm) {
    result.blocksPerSm = bySmem;
    result.limit = "shared memory";
  }
  if (entry.resources && entry.resources->registers > 0) {
    int64_t perWarp = (entry.resources->registers * 32 +
                       sm.registerUnitPerWarp - 1) /
                      sm.registerUnitPerWarp * sm.registerUnitPerWarp;
    int64_t byRegisters = sm.registersPerSm / (perWarp * warps);
    if (byRegisters < result.blocksPerSm) {
      result.blocksPerSm = byRegisters;
      result.limit = "registers";
    }
  }
  result.fraction =
      double(result.blocksPerSm * warps) / double(sm.maxWarpsPerSm);
  return result;
}

struct Roofline {
  double microseconds = 0;
  const char *bound = "memory";
  /// The FLOPs per second the time implies.
  double flopsPerSecond = 0;
};

/// The least time of a launch: the larger of its FLOPs at the peaks of the
/// units that run them, its bytes at HBM bandwidth, and its shared-memory
/// accesses at one warp-wide access (128 bytes) an SM per clock (with mma
/// fragments and softmax passes in shared memory, that and not the tensor
/// cores bounds an attention kernel).
Roofline roofline(const GpuPeaks &gpu, const KernelReportEntry &entry) {
  const DispatchWork &work = entry.work;
  double compute =
      (work.flops - work.tensorFlops - work.tf32Flops) / gpu.flops +
      work.tensorFlops / gpu.tensorFlops + work.tf32Flops / gpu.tf32Flops;
  double memory = entry.bytes / gpu.bytes;
  double shared = work.sharedAccesses / gpu.sharedInstructions;
  Roofline r;
  double seconds = std::max({compute, memory, shared});
  r.microseconds = seconds * 1e6;
  r.bound = shared > std::max(compute, memory) ? "shared memory"
            : compute > memory                 ? "compute"
                                               : "memory";
  r.flopsPerSecond = seconds > 0 ? work.flops / seconds : 0;
  return r;
}

/// Floating-point operations of one iteration point of a linalg body, or
/// of a scalar op in a loop.
int64_t floatOps(Operation *op) {
  if (op->getNumResults() != 1 ||
      !isa<FloatType>(getElementTypeOrSelf(op->getResult(0).getType())))
    return 0;
  if (isa<math::MathDialect>(op->getDialect()))
    return 1;
  if (op->getDialect()->getNamespace() == "arith" &&
      !isa<arith::ConstantOp, arith::SelectOp, arith::BitcastOp, arith::ExtFOp,
           arith::TruncFOp, arith::SIToFPOp, arith::UIToFPOp>(op))
    return 1;
  return 0;
}

/// The trip count of `loop`, when its bounds are constants.
std::optional<double> staticTrips(scf::ForOp loop) {
  std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> upper = getConstantIntValue(loop.getUpperBound());
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  if (!lower || !upper || !step || *step <= 0)
    return std::nullopt;
  return double(std::max<int64_t>(0, (*upper - *lower + *step - 1) / *step));
}

void countBlock(Block &block, double multiplier, DispatchWork &work,
                bool tensorCores, bool tf32);

void countOp(Operation *op, double multiplier, DispatchWork &work,
             bool tensorCores, bool tf32) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    double points = 1;
    for (int64_t range : linalgOp.getStaticLoopRanges()) {
      if (ShapedType::isDynamic(range)) {
        work.exact = false;
        continue;
      }
      points *= double(range);
    }
    int64_t perPoint = 0;
    for (Operation &inner : linalgOp.getBlock()->without_terminator())
      perPoint += floatOps(&inner);
    double flops = multiplier * points * double(perPoint);
    work.flops += flops;
    if (!tensorCores)
      return;
    if (std::optional<MmaKind> kind = tensorCoreProductKind(linalgOp, tf32))
      (*kind == MmaKind::tf32 ? work.tf32Flops : work.tensorFlops) += flops;
    return;
  }
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    std::optional<double> trips = staticTrips(loop);
    if (!trips)
      work.exact = false;
    countBlock(*loop.getBody(), multiplier * trips.value_or(1), work,
               tensorCores, tf32);
    return;
  }
  if (auto forall = dyn_cast<scf::ForallOp>(op)) {
    double trips = 1;
    for (auto [lower, upper, step] :
         llvm::zip(forall.getStaticLowerBound(), forall.getStaticUpperBound(),
                   forall.getStaticStep())) {
      if (ShapedType::isDynamic(lower) || ShapedType::isDynamic(upper) ||
          ShapedType::isDynamic(step) || step <= 0) {
        work.exact = false;
        continue;
      }
      trips *= double(std::max<int64_t>(0, (upper - lower + step - 1) / step));
    }
    countBlock(*forall.getBody(), multiplier * trips, work, tensorCores, tf32);
    return;
  }
  if (isa<scf::IfOp>(op))
    work.exact = false; // both branches are counted: an upper bound
  work.flops += multiplier * double(floatOps(op));
  for (Region &region : op->getRegions())
    for (Block &block : region)
      countBlock(block, multiplier, work, tensorCores, tf32);
}

void countBlock(Block &block, double multiplier, DispatchWork &work,
                bool tensorCores, bool tf32) {
  for (Operation &op : block)
    countOp(&op, multiplier, work, tensorCores, tf32);
}

std::string formatGrid(const std::array<uint32_t, 3> &grid) {
  return llvm::formatv("{0}x{1}x{2}", grid[0], grid[1], grid[2]).str();
}

} // namespace

DispatchWork lcc::countDispatchWork(func::FuncOp dispatch, bool tensorCores,
                                    bool tf32) {
  DispatchWork work;
  double workgroups = 1;
  if (auto count =
          dispatch->getAttrOfType<DenseI64ArrayAttr>("lcc.workgroup_count"))
    for (int64_t c : count.asArrayRef())
      workgroups *= double(c);
  if (!dispatch.getBody().empty())
    countBlock(dispatch.getBody().front(), workgroups, work, tensorCores, tf32);
  return work;
}

namespace {

/// Whether `memref` is (a view of) the block's shared memory.
bool isShared(Value memref) {
  return isa_and_nonnull<gpu::DynamicSharedMemoryOp>(
      viewedBuffer(memref).getDefiningOp());
}

/// The memref and bytes of a load or store, or none.
std::optional<std::pair<Value, int64_t>> accessOf(Operation *op) {
  auto bytesOf = [](Type type) {
    if (auto vector = dyn_cast<VectorType>(type))
      return vector.getNumElements() *
             llvm::divideCeil(vector.getElementTypeBitWidth(), 8);
    return int64_t(llvm::divideCeil(type.getIntOrFloatBitWidth(), 8));
  };
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return std::make_pair(load.getMemRef(), bytesOf(load.getType()));
  if (auto store = dyn_cast<memref::StoreOp>(op))
    return std::make_pair(store.getMemRef(),
                          bytesOf(store.getValueToStore().getType()));
  if (auto load = dyn_cast<vector::LoadOp>(op))
    return std::make_pair(load.getBase(), bytesOf(load.getType()));
  if (auto store = dyn_cast<vector::StoreOp>(op))
    return std::make_pair(store.getBase(),
                          bytesOf(store.getValueToStore().getType()));
  return std::nullopt;
}

/// Who runs the iterations of a loop spread over a block: its lower
/// bound is the thread's index (step the block), the warp's (thread / 32)
/// or the lane's (thread % 32).
enum class Spread { none, threads, warps, lanes };

Spread spreadOf(scf::ForOp loop) {
  Value lower = loop.getLowerBound();
  auto isThreadId = [](Value v) {
    return v.getDefiningOp<gpu::ThreadIdOp>() != nullptr;
  };
  if (isThreadId(lower))
    return Spread::threads;
  auto by32 = [](Value v) {
    std::optional<int64_t> c = getConstantIntValue(v);
    return c && *c == 32;
  };
  if (auto div = lower.getDefiningOp<arith::DivUIOp>();
      div && isThreadId(div.getLhs()) && by32(div.getRhs()))
    return Spread::warps;
  if (auto rem = lower.getDefiningOp<arith::RemUIOp>();
      rem && isThreadId(rem.getLhs()) && by32(rem.getRhs()))
    return Spread::lanes;
  return Spread::none;
}

/// The warp-wide instructions a block of `warps` warps issues for `op`: the
/// trip counts of its block-wide loops, times the warps that run it. A
/// loop spread over the threads to N runs as ceil(N / 32) warp
/// instructions, one over the warps to N as N, one over a warp's lanes to N
/// as ceil(N / 32) a warp. Sets `exact` false where a loop's count is
/// unknown (counted once) and assumes every thread runs the code its
/// branches guard.
double warpInstructions(Operation *op, double warps, bool &exact) {
  double runs = 1, agents = warps, lanes = 1;
  for (auto loop = op->getParentOfType<scf::ForOp>(); loop;
       loop = loop->getParentOfType<scf::ForOp>()) {
    std::optional<int64_t> upper = getConstantIntValue(loop.getUpperBound());
    Spread spread = spreadOf(loop);
    if (spread != Spread::none && upper) {
      double n = double(std::max<int64_t>(*upper, 0));
      if (spread == Spread::threads)
        agents = std::ceil(n / 32);
      else if (spread == Spread::warps)
        agents = n;
      else
        lanes = std::ceil(n / 32);
      continue;
    }
    if (std::optional<double> trips = staticTrips(loop))
      runs *= *trips;
    else
      exact = false;
  }
  return runs * agents * lanes;
}

} // namespace

BlockSharedWork lcc::countBlockSharedWork(gpu::GPUFuncOp kernel,
                                          int64_t blockSize) {
  BlockSharedWork work;
  double warps = double(llvm::divideCeil(blockSize, 32));
  kernel.walk([&](Operation *op) {
    if (auto call = dyn_cast<LLVM::CallIntrinsicOp>(op)) {
      if (call.getIntrin().starts_with("llvm.nvvm.mma."))
        work.mmas += warpInstructions(op, warps, work.exact);
      return;
    }
    std::optional<std::pair<Value, int64_t>> access = accessOf(op);
    if (!access || !isShared(access->first))
      return;
    // A warp-wide access moves 32 lanes' bytes, 128 of them a clock.
    double wavefronts =
        std::max<double>(1.0, double(access->second) * 32.0 / 128.0);
    work.sharedAccesses += wavefronts * warpInstructions(op, warps, work.exact);
  });
  return work;
}

llvm::StringMap<KernelResources> lcc::parsePtxasResources(llvm::StringRef log) {
  llvm::StringMap<KernelResources> resources;
  KernelResources *current = nullptr;
  llvm::SmallVector<llvm::StringRef> lines;
  log.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    line = line.trim();
    size_t entry = line.find("Compiling entry function '");
    if (entry != llvm::StringRef::npos) {
      llvm::StringRef name = line.drop_front(entry + 26);
      current = &resources[name.take_until([](char c) { return c == '\''; })];
      continue;
    }
    if (!current)
      continue;
    // "16 bytes stack frame, 16 bytes spill stores, 16 bytes spill loads"
    // and "Used 32 registers, used 1 barriers, ...".
    llvm::SmallVector<llvm::StringRef> parts;
    line.split(parts, ',');
    for (llvm::StringRef part : parts) {
      part = part.trim();
      if (part.consume_front("ptxas info    : "))
        part = part.trim();
      int64_t value = 0;
      llvm::StringRef rest = part;
      if (part.consume_front("Used ")) {
        if (!part.consumeInteger(10, value) && part.trim() == "registers")
          current->registers = value;
        continue;
      }
      if (rest.consumeInteger(10, value))
        continue;
      rest = rest.trim();
      if (rest == "bytes stack frame")
        current->stackBytes = value;
      else if (rest == "bytes spill stores" || rest == "bytes spill loads")
        current->spillBytes += value;
    }
  }
  return resources;
}

namespace {

std::string reportJson(llvm::ArrayRef<KernelReportEntry> entries,
                       llvm::StringRef arch, bool fromPtxas) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::Array kernels;
  for (const KernelReportEntry &entry : entries) {
    llvm::json::Object occupancies, rooflines;
    for (llvm::StringRef name : {"sm_80", "sm_90"}) {
      Occupancy o = occupancy(reportedArch(name), entry);
      occupancies[name] =
          llvm::json::Object{{"fraction", o.fraction},
                             {"blocks_per_sm", o.blocksPerSm},
                             {"limit", o.limit}};
    }
    for (const GpuPeaks *gpu : {&kH100, &kH200}) {
      Roofline r = roofline(*gpu, entry);
      rooflines[gpu->name] =
          llvm::json::Object{{"microseconds", r.microseconds},
                             {"bound", r.bound},
                             {"tflops", r.flopsPerSecond / 1e12}};
    }
    llvm::json::Object kernel{
        {"kernel", entry.kernel},
        {"location", entry.location},
        {"grid",
         llvm::json::Array{entry.grid[0], entry.grid[1], entry.grid[2]}},
        {"threads_per_block", entry.threads},
        {"shared_memory_bytes", entry.sharedMemoryBytes},
        {"registers", entry.resources
                          ? llvm::json::Value(entry.resources->registers)
                          : llvm::json::Value(nullptr)},
        {"spill_bytes", entry.resources
                            ? llvm::json::Value(entry.resources->spillBytes)
                            : llvm::json::Value(nullptr)},
        {"stack_bytes", entry.resources
                            ? llvm::json::Value(entry.resources->stackBytes)
                            : llvm::json::Value(nullptr)},
        {"occupancy", std::move(occupancies)},
        {"flops", entry.work.flops},
        {"flops_exact", entry.work.exact},
        {"tensor_core_flops", entry.work.tensorFlops + entry.work.tf32Flops},
        {"mma_instructions", entry.work.mmas},
        {"shared_accesses", entry.work.sharedAccesses},
        {"bytes", entry.bytes},
        {"flops_per_byte",
         entry.bytes > 0 ? entry.work.flops / entry.bytes : 0.0},
        {"roofline", std::move(rooflines)}};
    kernels.push_back(std::move(kernel));
  }
  llvm::json::Object document{
      {"arch", arch},
      {"resources_from", fromPtxas ? "ptxas" : "none"},
      {"peaks",
       llvm::json::Object{
           {"h100", llvm::json::Object{{"fp32_flops", kH100.flops},
                                       {"bf16_tensor_flops", kH100.tensorFlops},
                                       {"tf32_tensor_flops", kH100.tf32Flops},
                                       {"bytes_per_second", kH100.bytes},
                                       {"shared_instructions_per_second",
                                        kH100.sharedInstructions}}},
           {"h200", llvm::json::Object{{"fp32_flops", kH200.flops},
                                       {"bf16_tensor_flops", kH200.tensorFlops},
                                       {"tf32_tensor_flops", kH200.tf32Flops},
                                       {"bytes_per_second", kH200.bytes},
                                       {"shared_instructions_per_second",
                                        kH200.sharedInstructions}}}}},
      {"published_attention", kPublishedAttention},
      {"kernels", std::move(kernels)}};
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(document))) << "\n";
  return text;
}

std::string reportTable(llvm::ArrayRef<KernelReportEntry> entries,
                        llvm::StringRef arch, bool fromPtxas) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "CUDA kernels for " << arch << "; registers and spills "
     << (fromPtxas ? "from ptxas" : "unknown (no ptxas found)")
     << "; roofline over FP32 (CUDA cores), bf16 and tf32 tensor-core and "
        "HBM peaks (H100 67, 989 and 494 TFLOP/s, 3.35 TB/s; H200 the same, "
        "4.8 TB/s) and the kernel's shared-memory accesses (one warp-wide "
        "access an SM per clock); TC MFLOP: of the MFLOP, "
        "those on tensor cores; TFLOP/s: what the H100 bound allows; '~' "
        "marks FLOPs counted through loops of unknown trip count (a bound)\n"
     << "For comparison, " << kPublishedAttention << "\n";
  os << "| kernel | model op | grid | block | regs | spill B | smem KiB | "
        "occ sm_80 | occ sm_90 | MFLOP | TC MFLOP | MB | FLOP/B | H100 us | "
        "H200 us | H100 TFLOP/s | bound |\n";
  os << "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        "---:|---:|---|\n";
  for (const KernelReportEntry &entry : entries) {
    Occupancy sm80 = occupancy(reportedArch("sm_80"), entry),
              sm90 = occupancy(reportedArch("sm_90"), entry);
    Roofline h100 = roofline(kH100, entry), h200 = roofline(kH200, entry);
    os << llvm::formatv(
        "| {0} | {1} | {2} | {3} | {4} | {5} | {6:f1} | {7:f2} ({8}) | "
        "{9:f2} ({10}) | {11}{12:f1} | {18:f1} | {13:f2} | {14:f1} | {15:f1} | "
        "{16:f1} | {19:f1} | {17} |\n",
        entry.kernel, entry.location.empty() ? "-" : entry.location,
        formatGrid(entry.grid), entry.threads,
        entry.resources ? std::to_string(entry.resources->registers) : "-",
        entry.resources ? std::to_string(entry.resources->spillBytes) : "-",
        double(entry.sharedMemoryBytes) / 1024, sm80.fraction, sm80.limit,
        sm90.fraction, sm90.limit, entry.work.exact ? "" : "~",
        entry.work.flops / 1e6, entry.bytes / 1e6,
        entry.bytes > 0 ? entry.work.flops / entry.bytes : 0.0,
        h100.microseconds, h200.microseconds, h200.bound,
        (entry.work.tensorFlops + entry.work.tf32Flops) / 1e6,
        h100.flopsPerSecond / 1e12);
  }
  return text;
}

} // namespace

std::string lcc::formatKernelReport(llvm::ArrayRef<KernelReportEntry> entries,
                                    llvm::StringRef arch, bool json) {
  bool fromPtxas = !entries.empty() && entries.front().resources.has_value();
  return json ? reportJson(entries, arch, fromPtxas)
              : reportTable(entries, arch, fromPtxas);
}
