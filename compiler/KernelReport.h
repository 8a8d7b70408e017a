//===- KernelReport.h - what each CUDA kernel costs, statically -*- C++ -*-===//
//
// `lcc --target=cuda --emit=kernel-report` (a table) and
// `--emit=kernel-report-json`: for every GPU kernel its launch (grid, threads
// per block), its resources (registers, spill bytes, shared memory: from
// ptxas when it is found), the occupancy they allow on sm_80 and sm_90, the
// floating-point operations and the bytes of its bindings per launch, and
// the time bound these imply on an H100 and an H200 (a roofline over
// published peaks). docs/gpu.md explains each column.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_COMPILER_KERNELREPORT_H
#define LCC_COMPILER_KERNELREPORT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace lcc {

/// The floating-point operations one launch of a dispatch performs, counted
/// from its linalg ops and loops; `exact` is false when a loop's trip count
/// is not a constant (a causal or block-sparse skip), whose bound then
/// counts the loop once per iteration it may run at most, or once.
struct DispatchWork {
  double flops = 0;
  /// Of them, those of products on tensor cores: bf16 and tf32 mma.sync.
  double tensorFlops = 0, tf32Flops = 0;
  /// The launch's mma.sync and shared-memory accesses (countBlockSharedWork
  /// over the grid).
  double mmas = 0, sharedAccesses = 0;
  bool exact = true;
};

/// Counts the work of `dispatch` (a dispatch function on tensors, one
/// workgroup's body) over its whole grid; with `tensorCores`, the FLOPs of
/// the products the kernels compute on tensor cores apart.
DispatchWork countDispatchWork(mlir::func::FuncOp dispatch,
                               bool tensorCores = false, bool tf32 = false);

/// The mma.sync and shared-memory accesses (warp-wide, in 128-byte
/// wavefronts) one block of `kernel` (`blockSize` threads, after
/// lcc-distribute-to-threads and lcc-promote-workgroup-buffers) issues,
/// each counted through its loops' trip counts as one thread runs them
/// (a loop of unknown count once, and then not exact).
struct BlockSharedWork {
  double mmas = 0, sharedAccesses = 0;
  bool exact = true;
};
BlockSharedWork countBlockSharedWork(mlir::gpu::GPUFuncOp kernel,
                                     int64_t blockSize);

/// What ptxas reported of a kernel.
struct KernelResources {
  int64_t registers = 0;
  int64_t spillBytes = 0; // spill stores + loads
  int64_t stackBytes = 0;
};

struct KernelReportEntry {
  std::string kernel;
  std::string location; // of its model op
  std::array<uint32_t, 3> grid{};
  int64_t threads = 0;
  int64_t sharedMemoryBytes = 0;
  std::optional<KernelResources> resources; // none without ptxas
  DispatchWork work;
  double bytes = 0; // of its bindings, read or written once
};

/// The table (`json` false) or JSON document of `entries`, for `arch`.
std::string formatKernelReport(llvm::ArrayRef<KernelReportEntry> entries,
                               llvm::StringRef arch, bool json);

/// Reads ptxas -v output: each entry function's resources by name.
llvm::StringMap<KernelResources> parsePtxasResources(llvm::StringRef log);

} // namespace lcc

#endif // LCC_COMPILER_KERNELREPORT_H
