//===- ScalarOps.h - scalar arithmetic inside lowered bodies ----*- C++ -*-===//
//
// The scalars the lowerings compute with inside linalg.generic bodies and
// sequential loops: float sums and products, index and i32 constants and
// casts, and the three guarded operations every softmax and norm here
// shares (an index clamped into its table, exp(x - m) that is zero for an
// empty row, and the floored inverse norm).
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_LOWERTOLINALG_SCALAROPS_H
#define LCC_PASSES_LOWERTOLINALG_SCALAROPS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

#include <limits>

namespace lcc::lowering {

constexpr double kNegativeInfinity = -std::numeric_limits<double>::infinity();
/// Reformer's score of a token with itself under shared-QK attention (LSH
/// and dense): it attends to itself only when nothing else is visible.
constexpr double kSelfAttentionScore = -1e5;

mlir::Value add(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                mlir::Value y);
mlir::Value mul(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                mlir::Value y);
/// `x` (a float of any width) as f32: half values widened, f32 as it is.
mlir::Value widenedToF32(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);
/// `x` (f32) as `type`: rounded to a half type, as it is when f32.
mlir::Value roundedTo(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                      mlir::Type type);
/// A float constant of `type`.
mlir::Value floatConstant(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Type type, double value);

mlir::Value indexConstant(mlir::OpBuilder &b, mlir::Location loc, int64_t v);
mlir::Value i32Constant(mlir::OpBuilder &b, mlir::Location loc, int64_t v);
mlir::Value castToIndex(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v);
mlir::Value castToI32(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v);

/// An index read from data, clamped into [0, size): a bad token or label
/// id can never address memory outside its table.
mlir::Value clampedIndex(mlir::OpBuilder &b, mlir::Location loc, mlir::Value id,
                         int64_t size);

/// Whether `index` (an index) lies in [0, size), and it clamped into
/// [0, size), so that a read there stays in bounds whichever it is.
std::pair<mlir::Value, mlir::Value> indexWithin(mlir::OpBuilder &b,
                                                mlir::Location loc,
                                                mlir::Value index,
                                                int64_t size);

/// An i32 position where -1 (any negative) marks none: whether it is one,
/// and the position as an index, 0 for none so that reading there stays in
/// bounds.
std::pair<mlir::Value, mlir::Value>
markedPosition(mlir::OpBuilder &b, mlir::Location loc, mlir::Value position);

/// exp(x - m) for m a maximum over x's row, and 0 where x is -inf: a
/// hidden key, or every key of a row that has seen no visible one yet (m
/// is then -inf too, and x - m would be NaN). Keyed on x rather than m so
/// that a NaN score stays NaN even where the row's maximum skipped it.
/// The exp is marked kShiftedExpAttrName: the CPU expands it in a short
/// form that holds for such arguments.
mlir::Value expShifted(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                       mlir::Value m);

/// x > y ? x : y, the comparison x86's maxps computes in one instruction
/// (arith.maximumf needs five to propagate NaN): a NaN x yields y. For
/// running maxima whose NaN inputs stay NaN through expShifted.
mlir::Value larger(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                   mlir::Value y);

/// 1 / max(||x||, 1e-12) from ||x||^2: the norm is floored as
/// torch.nn.functional.normalize floors it, so a zero row normalises to zero
/// instead of NaN (a padded position, a zero query).
mlir::Value inverseNorm(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value sumSquares);

} // namespace lcc::lowering

#endif // LCC_PASSES_LOWERTOLINALG_SCALAROPS_H
