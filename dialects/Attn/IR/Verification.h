//===- Verification.h - shape checks the attn verifiers share ---*- C++ -*-===//
//
// Verifiers name the operand or attribute at fault and quote the expected and
// actual value, so a user can fix a model from the message alone. These
// helpers, used by AttnOps.cpp and AttnTrainingOps.cpp, say it one way.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_DIALECT_ATTN_IR_VERIFICATION_H
#define LCC_DIALECT_ATTN_IR_VERIFICATION_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/APFloat.h"

#include <optional>
#include <string>

namespace lcc::attn::detail {

using mlir::ArrayRef;
using mlir::failed;
using mlir::failure;
using mlir::LogicalResult;
using mlir::Operation;
using mlir::RankedTensorType;
using mlir::ShapedType;
using mlir::StringRef;
using mlir::success;
using mlir::Type;
using mlir::Value;
using mlir::verifyCompatibleShape;

/// A ranked tensor operand or result, with the name messages use for it.
struct NamedTensor {
  StringRef name;
  RankedTensorType type;

  NamedTensor(StringRef name, Value value)
      : name(name), type(llvm::cast<RankedTensorType>(value.getType())) {}

  int64_t rank() const { return type.getRank(); }
  int64_t dim(int64_t i) const { return type.getDimSize(i); }
  Type elementType() const { return type.getElementType(); }
};

/// Checks a tensor's shape and element type against its expectations and
/// reports the first mismatch on `op`.
class ShapeChecker {
public:
  explicit ShapeChecker(Operation *op) : op(op) {}

  /// `layout` names the dimensions, e.g. "[batch, heads, seq, head_dim]".
  LogicalResult rank(const NamedTensor &t, int64_t expected, StringRef layout) {
    if (t.rank() != expected)
      return op->emitOpError()
             << "expected " << t.name << " of rank " << expected << " "
             << layout << ", got rank " << t.rank() << " (" << t.type << ")";
    return nonEmpty(t);
  }

  LogicalResult minRank(const NamedTensor &t, int64_t expected,
                        StringRef layout) {
    if (t.rank() < expected)
      return op->emitOpError()
             << "expected " << t.name << " of rank >= " << expected << " "
             << layout << ", got rank " << t.rank() << " (" << t.type << ")";
    return nonEmpty(t);
  }

  /// A zero-size dimension (an empty batch, sequence or feature axis)
  /// leaves nothing to compute and no position to attend to.
  LogicalResult nonEmpty(const NamedTensor &t) {
    if (llvm::is_contained(t.type.getShape(), 0))
      return op->emitOpError() << "expected every dimension of " << t.name
                               << " to be at least 1, got " << t.type;
    return success();
  }

  /// Dynamic sizes match anything; static ones must be equal.
  LogicalResult dim(const NamedTensor &t, int64_t index, StringRef dimName,
                    int64_t expected) {
    int64_t actual = t.dim(index);
    if (ShapedType::isDynamic(actual) || ShapedType::isDynamic(expected) ||
        actual == expected)
      return success();
    return op->emitOpError() << "expected " << t.name << " " << dimName << " "
                             << expected << ", got " << actual;
  }

  LogicalResult elementType(const NamedTensor &t, Type expected) {
    if (t.elementType() == expected)
      return success();
    return op->emitOpError() << "expected " << t.name << " element type "
                             << expected << ", got " << t.elementType();
  }

  LogicalResult shape(const NamedTensor &t, ArrayRef<int64_t> expected) {
    if (t.rank() != static_cast<int64_t>(expected.size()) ||
        failed(verifyCompatibleShape(t.type.getShape(), expected)))
      return op->emitOpError()
             << "expected " << t.name << " of shape " << formatShape(expected)
             << ", got " << formatShape(t.type.getShape());
    return nonEmpty(t);
  }

  static std::string formatShape(ArrayRef<int64_t> shape) {
    std::string s = "[";
    llvm::raw_string_ostream os(s);
    llvm::interleaveComma(shape, os, [&](int64_t d) {
      if (ShapedType::isDynamic(d))
        os << "?";
      else
        os << d;
    });
    os << "]";
    return s;
  }

private:
  Operation *op;
};

constexpr llvm::StringLiteral kAttentionLayout =
    "[batch, heads, seq, head_dim]";
constexpr llvm::StringLiteral kActivationLayout = "[batch, seq, d_model]";

/// Checks the operands and result of an attention form: q, k, v of rank 4
/// with matching batch, heads and element type, k and v of one sequence
/// length, q and k of one head_dim, and a result of [batch, heads, q_seq,
/// v_head_dim]. `sameSeq` requires one sequence for queries and keys.
LogicalResult verifyAttentionOperands(mlir::Operation *op, mlir::Value query,
                                      mlir::Value key, mlir::Value value,
                                      mlir::Value result, bool sameSeq,
                                      llvm::StringRef queryName = "query");
/// Formats a float attribute value as a user wrote it ("0.5", "1e-05").
std::string formatFloat(double value);
/// Checks that an optional float attribute is finite and positive.
LogicalResult verifyPositive(mlir::Operation *op, llvm::StringRef attr,
                             std::optional<llvm::APFloat> value);
LogicalResult verifyScale(mlir::Operation *op,
                          std::optional<llvm::APFloat> scale);
/// Checks `value >= minimum` for an integer attribute.
LogicalResult verifyAtLeast(mlir::Operation *op, llvm::StringRef attr,
                            int64_t value, int64_t minimum);
/// Checks `value <= limit` where the limit is a dimension (skipped when the
/// dimension is dynamic).
LogicalResult verifyAtMost(mlir::Operation *op, llvm::StringRef attr,
                           int64_t value, llvm::StringRef limitName,
                           int64_t limit);
/// Checks 1 <= `chunks` <= batch * heads of the [batch, heads, seq, dim]
/// `rows` (LSH attention's row groups).
LogicalResult verifyRowChunks(mlir::Operation *op, int64_t chunks,
                              mlir::Value rows);
/// Checks an LSH attention's hashing: n_buckets (when given) even, at least
/// 2 and at most kMaxLSHBuckets; a multiple of 4 with `factorized`; and
/// at most kMaxRotationValues rotation values for the [batch, heads, seq,
/// head_dim] `queryKey`.
LogicalResult verifyLSHHashing(mlir::Operation *op, mlir::Value queryKey,
                               int64_t nHashes, int64_t bucketSize,
                               std::optional<int64_t> nBuckets,
                               bool factorized);
/// Checks a routed attention's operands, `result` (the forward's result or
/// the backward's gradient of it) and attributes.
LogicalResult verifyRoutedAttention(mlir::Operation *op, mlir::Value query,
                                    mlir::Value key, mlir::Value value,
                                    mlir::Value result, mlir::Value centroids,
                                    int64_t clusters, int64_t window,
                                    int64_t seed,
                                    std::optional<llvm::APFloat> scale);
/// Checks a relative attention's operands, `result` (the forward's result
/// or the backward's gradient of it), `logSumExp` (when given) and
/// attributes. With a `queryOffset`, the queries are placed by it, not as
/// the last of the keys: no memory rule, and `pos` any number of rows.
LogicalResult verifyRelativeAttention(
    mlir::Operation *op, mlir::Value query, mlir::Value key, mlir::Value value,
    mlir::Value pos, mlir::Value u, mlir::Value w, mlir::Value result,
    mlir::Value logSumExp, mlir::Value queryOffset,
    std::optional<llvm::APFloat> scale, std::optional<int64_t> clampLen,
    std::optional<int64_t> sameLength);
/// Checks an adaptive-span attention's operands, `result` (the forward's
/// result or the backward's gradient of it), `logNormalizer` (when given)
/// and attributes; with a `queryOffset`, no memory rule.
LogicalResult
verifyAdaptiveSpanAttention(mlir::Operation *op, mlir::Value query,
                            mlir::Value key, mlir::Value value, mlir::Value z,
                            mlir::Value result, mlir::Value logNormalizer,
                            mlir::Value queryOffset, int64_t maxSpan,
                            int64_t ramp, std::optional<llvm::APFloat> scale);
/// Checks that `region` has one block whose arguments have `argTypes` and
/// whose `attn.yield` yields exactly `yieldTypes`.
LogicalResult verifyBlockSignature(mlir::Operation *op, mlir::Region &region,
                                   llvm::StringRef regionName,
                                   mlir::TypeRange argTypes,
                                   mlir::TypeRange yieldTypes);

/// The mask (index 0) or score (1) region of an attention op's
/// `modifiers`, or null when absent.
mlir::Region *modifierRegion(llvm::MutableArrayRef<mlir::Region> modifiers,
                             unsigned index);
/// Checks the mask and score regions of an attention op. Scores are f32
/// whatever the operands' type (half attention computes them in f32), so
/// a score region takes and yields f32.
LogicalResult
verifyAttentionModifiers(mlir::Operation *op,
                         llvm::MutableArrayRef<mlir::Region> modifiers);

/// Checks an attention op's `positions`: none, or a [q_seq] and a [k_seq]
/// of i64 (`query`'s and `key`'s sequences), with a region or `causal` to
/// read them.
LogicalResult verifyAttentionPositions(mlir::Operation *op,
                                       mlir::ValueRange positions,
                                       mlir::Value query, mlir::Value key,
                                       bool readByRegionOrCausal);

/// Checks the operands of a merge of partial attention results (or its
/// backward): two [batch, heads, seq, dim] partials of one type, their
/// [batch, heads, seq] logsumexps, a tensor<1xf32> gate when given, and
/// that each of `alike` has the type of `first` and each of `alikeRows`
/// that of `firstLogSumExp`.
LogicalResult verifyMergedPartials(mlir::Operation *op, mlir::Value first,
                                   mlir::Value firstLogSumExp,
                                   mlir::Value second,
                                   mlir::Value secondLogSumExp,
                                   mlir::Value gate, mlir::ValueRange alike,
                                   mlir::ValueRange alikeRows);

} // namespace lcc::attn::detail

#endif // LCC_DIALECT_ATTN_IR_VERIFICATION_H
