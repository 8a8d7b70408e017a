//===- RoutedKeyWindow.cpp - each cluster's window of nearest keys --------===//
//
// The Routing Transformer's balanced routing of keys: every cluster takes
// exactly `window` keys, those with the largest cosine to its centroid.
// Instead of a sort, a bisection on the value finds the window-th largest
// cosine and one pass collects the keys at or above it, in position order.
//
//===----------------------------------------------------------------------===//

#include "passes/forms/routed/RoutedSteps.h"
#include "passes/LowerToLinalg/ScalarOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::lowering;

namespace {

/// The loop bounds every pass over the n scores shares.
struct ScoreLoop {
  Value c0, c1, cn;
};

/// Score j of `scores`, in f64. Scores are cosines in [-1, 1]; whatever the
/// input (zeros, NaN, Inf), each is read as a value in [-2, 1.5], NaN as
/// -2, so that the bisection's invariant holds from the start and the
/// window is always filled with `window` distinct valid positions.
Value scoreAt(OpBuilder &nb, Location l, Value scores, Value j) {
  Type f64 = nb.getF64Type();
  Value s = arith::ExtFOp::create(
      nb, l, f64, tensor::ExtractOp::create(nb, l, scores, j).getResult());
  auto constant = [&](double v) -> Value {
    return floatConstant(nb, l, f64, v);
  };
  Value isNan = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::UNO, s, s);
  Value clamped = arith::MinimumFOp::create(
      nb, l, arith::MaximumFOp::create(nb, l, s, constant(-2.0)),
      constant(1.5));
  return arith::SelectOp::create(nb, l, isNan, constant(-2.0), clamped);
}

/// The window-th largest score: bisection keeps count(score >= lo) >=
/// window > count(score >= hi), then the smallest score >= lo is it.
Value windowThreshold(OpBuilder &b, Location loc, const ScoreLoop &loop,
                      Value scores, int64_t window) {
  Type f64 = b.getF64Type();
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto f64c = [&](double v) -> Value { return floatConstant(b, loc, f64, v); };
  Value c0 = loop.c0, c1 = loop.c1, cn = loop.cn;
  auto bisect = scf::ForOp::create(
      b, loc, c0, index(60), c1, ValueRange{f64c(-2.0), f64c(2.0)},
      [&](OpBuilder &nb, Location l, Value, ValueRange it) {
        Value mid = arith::MulFOp::create(
            nb, l, arith::AddFOp::create(nb, l, it[0], it[1]),
            floatConstant(nb, l, f64, 0.5));
        auto count = scf::ForOp::create(
            nb, l, c0, cn, c1, ValueRange{i32Constant(nb, l, 0)},
            [&](OpBuilder &cb, Location cl, Value j, ValueRange acc) {
              Value ge =
                  arith::CmpFOp::create(cb, cl, arith::CmpFPredicate::OGE,
                                        scoreAt(cb, cl, scores, j), mid);
              Value inc = arith::ExtUIOp::create(cb, cl, cb.getI32Type(), ge);
              scf::YieldOp::create(
                  cb, cl,
                  ValueRange{arith::AddIOp::create(cb, cl, acc[0], inc)});
            });
        Value enough = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge,
                                             count.getResult(0),
                                             i32Constant(nb, l, window));
        scf::YieldOp::create(
            nb, l,
            ValueRange{arith::SelectOp::create(nb, l, enough, mid, it[0]),
                       arith::SelectOp::create(nb, l, enough, it[1], mid)});
      });
  Value lo = bisect.getResult(0);
  auto least = scf::ForOp::create(
      b, loc, c0, cn, c1, ValueRange{f64c(3.0)},
      [&](OpBuilder &nb, Location l, Value j, ValueRange it) {
        Value s = scoreAt(nb, l, scores, j);
        Value candidate =
            arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGE, s, lo);
        Value smaller =
            arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OLT, s, it[0]);
        Value take = arith::AndIOp::create(nb, l, candidate, smaller);
        scf::YieldOp::create(
            nb, l, ValueRange{arith::SelectOp::create(nb, l, take, s, it[0])});
      });
  return least.getResult(0);
}

/// The positions, ascending, of the scores above `threshold`, then of as
/// many equal to it as fit in `window` (ties by position).
Value collectWindow(OpBuilder &b, Location loc, const ScoreLoop &loop,
                    Value scores, int64_t window, Value threshold) {
  Type i32 = b.getI32Type();
  Value c0 = loop.c0, c1 = loop.c1, cn = loop.cn;
  auto greater = scf::ForOp::create(
      b, loc, c0, cn, c1, ValueRange{i32Constant(b, loc, 0)},
      [&](OpBuilder &nb, Location l, Value j, ValueRange acc) {
        Value gt = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT,
                                         scoreAt(nb, l, scores, j), threshold);
        scf::YieldOp::create(
            nb, l,
            ValueRange{arith::AddIOp::create(
                nb, l, acc[0],
                arith::ExtUIOp::create(nb, l, nb.getI32Type(), gt))});
      });
  Value ties = arith::SubIOp::create(b, loc, i32Constant(b, loc, window),
                                     greater.getResult(0));
  Value empty =
      linalg::FillOp::create(b, loc, ValueRange{i32Constant(b, loc, 0)},
                             ValueRange{tensor::EmptyOp::create(
                                 b, loc, ArrayRef<int64_t>{window}, i32)})
          .getResult(0);
  auto collect = scf::ForOp::create(
      b, loc, c0, cn, c1,
      ValueRange{empty, i32Constant(b, loc, 0), i32Constant(b, loc, 0)},
      [&](OpBuilder &nb, Location l, Value j, ValueRange it) {
        Value s = scoreAt(nb, l, scores, j);
        Value gt = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT, s,
                                         threshold);
        Value eq = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ, s,
                                         threshold);
        Value tieRoom = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt,
                                              it[2], ties);
        Value tie = arith::AndIOp::create(nb, l, eq, tieRoom);
        // Never more than `window`, even where scores closer together than
        // the bisection resolves make more of them exceed it.
        Value room = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt,
                                           it[1], i32Constant(nb, l, window));
        Value take = arith::AndIOp::create(
            nb, l, arith::OrIOp::create(nb, l, gt, tie), room);
        auto write = scf::IfOp::create(
            nb, l, take,
            [&](OpBuilder &wb, Location wl) {
              Value position =
                  arith::IndexCastOp::create(wb, wl, wb.getI32Type(), j);
              Value at =
                  arith::IndexCastOp::create(wb, wl, wb.getIndexType(), it[1]);
              scf::YieldOp::create(
                  wb, wl,
                  tensor::InsertOp::create(wb, wl, position, it[0], at)
                      .getResult());
            },
            [&](OpBuilder &wb, Location wl) {
              scf::YieldOp::create(wb, wl, it[0]);
            });
        Value count = arith::AddIOp::create(
            nb, l, it[1], arith::ExtUIOp::create(nb, l, nb.getI32Type(), take));
        Value tiesTaken = arith::AddIOp::create(
            nb, l, it[2], arith::ExtUIOp::create(nb, l, nb.getI32Type(), tie));
        scf::YieldOp::create(nb, l,
                             ValueRange{write.getResult(0), count, tiesTaken});
      });
  return collect.getResult(0);
}

} // namespace

Value lcc::lowering::selectWindow(OpBuilder &b, Location loc, Value scores,
                                  int64_t n, int64_t window) {
  return selectWindow(b, loc, scores, arith::ConstantIndexOp::create(b, loc, n),
                      window);
}

Value lcc::lowering::selectWindow(OpBuilder &b, Location loc, Value scores,
                                  Value n, int64_t window) {
  ScoreLoop loop;
  loop.c0 = arith::ConstantIndexOp::create(b, loc, 0);
  loop.c1 = arith::ConstantIndexOp::create(b, loc, 1);
  loop.cn = n;
  Value threshold = windowThreshold(b, loc, loop, scores, window);
  return collectWindow(b, loc, loop, scores, window, threshold);
}
