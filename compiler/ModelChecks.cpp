//===- ModelChecks.cpp - what lcc can compile, checked before it starts ---===//
//
// The attn verifiers check each op's own meaning. A model may also hold
// upstream ops, and its functions are the artifact's signatures; both must
// be within what the backend compiles, or the user meets an internal error
// stages later ("left outside every dispatch"). These checks reject the
// rest up front, naming the op or argument and the rule.
//
//===----------------------------------------------------------------------===//

#include "compiler/ModelChecks.h"

#include "dialects/Attn/IR/AttnDialect.h"
#include "passes/AttentionForms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/APInt.h"

using namespace mlir;

namespace {

/// The largest tensor a model may name: the runtime's limit (1 TiB).
constexpr uint64_t kMaxTensorBytes = uint64_t(1) << 40;
/// Positions are 32-bit integers in the LSH and routed kernels.
constexpr int64_t kMaxDimension = (int64_t(1) << 31) - 1;

constexpr StringLiteral kAllowedOps =
    "the attn dialect, arith and math ops (elementwise on tensors), linalg "
    "ops on tensors, and tensor.empty, extract_slice, insert_slice, concat, "
    "expand_shape, collapse_shape and pad, func.call of another function of "
    "the model (inlined), and the ops of a loaded plugin's attention forms";

bool isAllowedOp(Operation *op) {
  Dialect *dialect = op->getDialect();
  if (!dialect)
    return false;
  if (isa<lcc::attn::AttnDialect, arith::ArithDialect, math::MathDialect,
          linalg::LinalgDialect>(dialect))
    return true;
  if (isa<func::FuncOp, func::ReturnOp, func::CallOp>(op))
    return true;
  if (lcc::isAttentionFormDialect(dialect->getNamespace()))
    return true;
  // Tensor ops that build or view tensors; scalar reads inside bodies.
  return isa<tensor::EmptyOp, tensor::ExtractSliceOp, tensor::InsertSliceOp,
             tensor::ConcatOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp,
             tensor::PadOp, tensor::YieldOp, tensor::ExtractOp,
             tensor::FromElementsOp, tensor::GenerateOp>(op);
}

/// The element types an artifact holds (runtime/schema/lcm.fbs DType).
bool isArtifactElementType(Type type) {
  return type.isF32() || type.isF16() || type.isBF16() || type.isInteger(32) ||
         type.isInteger(64);
}

/// Why `type` cannot be a function argument or result, or "".
std::string signatureProblem(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return "lcc compiles functions of ranked tensors";
  if (!tensor.hasStaticShape())
    return "lcc compiles statically shaped tensors; give every dimension";
  if (!isArtifactElementType(tensor.getElementType()))
    return "an artifact holds f32, f16, bf16, i32 and i64 tensors";
  APInt bytes(128, (tensor.getElementTypeBitWidth() + 7) / 8);
  for (int64_t dim : tensor.getShape()) {
    if (dim < 1)
      return "every dimension must be at least 1";
    if (dim > kMaxDimension)
      return "every dimension must be below 2^31";
    bytes *= APInt(128, dim);
  }
  if (bytes.ugt(kMaxTensorBytes))
    return "a tensor may hold at most 2^40 bytes (1 TiB)";
  return "";
}

LogicalResult checkSignature(func::FuncOp func) {
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
    std::string problem = signatureProblem(type);
    if (!problem.empty())
      return func.emitOpError()
             << "argument " << i << " has type " << type << ": " << problem;
  }
  for (auto [i, type] : llvm::enumerate(func.getResultTypes())) {
    std::string problem = signatureProblem(type);
    if (!problem.empty())
      return func.emitOpError()
             << "result " << i << " has type " << type << ": " << problem;
  }
  return success();
}

LogicalResult checkBody(func::FuncOp func) {
  WalkResult walk = func.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op == func.getOperation())
      return WalkResult::advance();
    if (!isAllowedOp(op)) {
      op->emitOpError() << "is not supported in an lcc model; a model may "
                           "use "
                        << kAllowedOps << " (docs/user-guide.md)";
      return WalkResult::interrupt();
    }
    // The tensors ops make become buffers: the signature's bounds hold.
    for (Type type : op->getResultTypes()) {
      if (!isa<TensorType>(type))
        continue;
      std::string problem = signatureProblem(type);
      if (!problem.empty()) {
        op->emitOpError() << "result has type " << type << ": " << problem;
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

} // namespace

LogicalResult lcc::checkModelIsCompilable(ModuleOp module) {
  for (Operation &op : module.getBody()->getOperations()) {
    auto func = dyn_cast<func::FuncOp>(op);
    if (!func)
      return op.emitOpError() << "is not supported at the top level of an "
                                 "lcc model; it holds func.func ops";
    if (func.isExternal())
      return func.emitOpError("has no body; every function of a model is "
                              "compiled, so each needs one");
    if (failed(checkSignature(func)) || failed(checkBody(func)))
      return failure();
  }
  return success();
}
