//===- TestModules.h - sample modules over the test kernels -----*- C++ -*-===//
//
// Valid module descriptions that run the kernels of kernels.c, shared by the
// unit tests and lcm-testgen (which writes them out for the lit tests).
//
//===----------------------------------------------------------------------===//

#ifndef LCC_TEST_RUNTIME_TESTMODULES_H
#define LCC_TEST_RUNTIME_TESTMODULES_H

#include "ArtifactBuilder.h"

#include <string>
#include <vector>

namespace lcc::test {

/// Bytes of the shared objects built from kernels.c and kernels_variant.c.
const std::vector<uint8_t> &getKernelLibrary();
const std::vector<uint8_t> &getVariantKernelLibrary();

/// One executable holding every kernel of kernels.c; entry point indices:
enum KernelIndex : uint32_t {
  kVectorAdd = 0,   // (a, b, out) f32, 64 elements per workgroup
  kMatmul = 1,      // (A[8,6], B[6,12], C[8,12]) f32, grid (3, 2, 1)
  kScale2 = 2,      // (in, out) f32, 64 per workgroup
  kAddBias = 3,     // (in, bias[64], out) f32, 64 per workgroup
  kGridIds = 4,     // (ids[2,3,4] i32), grid (4, 3, 2)
  kCountVisits = 5, // (visits i32), one element per workgroup
};
ExecutableSpec kernelExecutable();
/// kernelExecutable() and the training kernels after it:
enum TrainingKernelIndex : uint32_t {
  kMseLoss = 6,      // (x, weight, w, loss)
  kMseGradients = 7, // (x, weight, w, loss, dloss/dw)
  kMseTrainStep = 8, // (x, weight, w, steps, loss); writes w and steps
};
ExecutableSpec trainingExecutable();
/// The same entry points as a GPU executable of `format` for `target`, 64
/// threads per block. Its data is a stand-in that only the fake driver of
/// the tests (FakeCudaDriver.c) loads: it runs kernels.c on the host.
ExecutableSpec fakeGpuExecutable(lcm::ExecutableFormat format,
                                 const std::string &target = "sm_90");
/// `spec` with the GPU executables the compiler writes for --target=cpu,cuda
/// after its CPU one: PTX and a cubin, both for sm_90.
ModuleSpec withGpuExecutables(ModuleSpec spec);

/// "add": sum = a + b over `n` f32 (n a multiple of 64).
ModuleSpec vectorAddModule(int64_t n = 256);
/// "matmul": C = A B with A [8, 6], B [6, 12].
ModuleSpec matmulModule();
/// "affine": y = 2 x + bias (bias [64] repeated) over x [128], through a
/// transient buffer at arena offset 64. The parameter "bias" (Normal, 0.5)
/// is embedded when `embeddedBias` is given, else bound from a file.
ModuleSpec affineModule(const std::vector<float> *embeddedBias = nullptr);
/// "copy": input x [4, 16] f32; outputs "y" (x copied through the arena)
/// and "row3" (the last row of x), all by Copy commands.
ModuleSpec copyModule();
/// copyModule with two all-reduces after its first copy, on the arena: the
/// mean over the ranks of x's rows 0-1, the sum of rows 2-3 (two ranges):
/// in a job of P ranks holding one x, y = [x[0:2], P * x[2:4]].
ModuleSpec reduceOverRanksModule();
/// "exchange": input x [4, 16] f32, copied to the arena; outputs "blocks",
/// the arena's all-to-all in `ranks` blocks (of 256 / ranks bytes),
/// "shifted", the arena passed one rank back around the ring (offset -1),
/// "mine" [16], this rank's block of the arena's first 16 * ranks floats,
/// and "padded" [ranks, 16], the arena's first row at this rank's block.
ModuleSpec exchangeModule(uint64_t ranks);
/// "grid": ids [2, 3, 4] i32 from grid_ids; "visits": [1000] i32 from
/// count_visits over 1000 workgroups. Neither takes inputs.
ModuleSpec gridModule();
/// "widen": output = the embedded bf16 parameter "values" [4] = {1.5, -2,
/// 0.25, 3}, by a Copy.
ModuleSpec widenModule();
/// No functions; parameters covering each init and dtype.
ModuleSpec parameterInitModule();
/// What `lcc --train --optimizer=sgd --lr=4 --emit-gradients` makes of a
/// toy loss (kernels.c): loss(x [4, 16] f32, weight [4] i32 in [0, 3]) =
/// sum_b weight[b] sum_j (x[b][j] - w[j])^2 / 64, over the parameter "w"
/// [16] (Normal, 1). Functions "loss" (result "loss"), "train_step" (returns
/// the loss, then w -= 4 dloss/dw in place and adds 1 to the optimizer
/// state "optimizer.steps" [1] f32) and "loss_gradients" (results "loss" and
/// "w", the gradient).
ModuleSpec trainingModule();

/// Little-endian bytes of `values`.
std::vector<uint8_t> toBytes(const std::vector<float> &values);

} // namespace lcc::test

#endif // LCC_TEST_RUNTIME_TESTMODULES_H
