//===- BlockLoopSums.cpp - a kernel's long running sums in blocks ---------===//
//
// A GPU thread that owns an output of a reduction sums it in one loop: a
// weight's gradient over a sequence's 4096 positions is one running float32
// sum of 4096 products, 1e-6 to 2e-6 off (passes/Summation.h). A loop
// whose iteration arguments are each only a running sum is split into
// blocks: each block's terms summed from zero, the block's sum then added
// to the running one. The sums' `reassoc` flags allow exactly this.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "passes/Summation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace lcc {
#define GEN_PASS_DEF_BLOCKLOOPSUMS
#include "compiler/Passes.h.inc"
} // namespace lcc

using namespace mlir;

namespace {

/// A loop shorter than this keeps its sums: its rounding is the blocked
/// form's already.
constexpr int64_t kMinTripCount = 256;

/// The trip count of `loop` when it runs from 0 by 1 to a constant.
std::optional<int64_t> tripCountFromZero(scf::ForOp loop) {
  std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  std::optional<int64_t> upper = getConstantIntValue(loop.getUpperBound());
  if (!lower || !step || !upper || *lower != 0 || *step != 1)
    return std::nullopt;
  return upper;
}

/// The addf that makes the next value of each of `loop`'s iteration
/// arguments, when each argument is only a running sum: its one use is a
/// float addf in the loop's body, and that sum's one use is its yield.
std::optional<SmallVector<arith::AddFOp>> runningSums(scf::ForOp loop) {
  if (loop.getNumRegionIterArgs() == 0)
    return std::nullopt;
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  SmallVector<arith::AddFOp> sums;
  for (auto [i, arg] : llvm::enumerate(loop.getRegionIterArgs())) {
    if (!arg.hasOneUse())
      return std::nullopt;
    auto sum = dyn_cast<arith::AddFOp>(*arg.getUsers().begin());
    if (!sum || sum->getBlock() != loop.getBody() ||
        !sum.getResult().hasOneUse() ||
        *sum.getResult().getUsers().begin() != yield.getOperation() ||
        yield.getOperand(i) != sum.getResult())
      return std::nullopt;
    sums.push_back(sum);
  }
  return sums;
}

/// for k in [0, blocks * block): s += x(k)  becomes
/// for b in [0, blocks): { p = 0; for j in [0, block): p += x(b * block + j);
///                         s += p }.
void blockRunningSums(RewriterBase &rewriter, scf::ForOp loop, int64_t block,
                      MutableArrayRef<arith::AddFOp> sums) {
  Location loc = loop.getLoc();
  rewriter.setInsertionPoint(loop);
  int64_t blocks = *tripCountFromZero(loop) / block;
  Type index = loop.getInductionVar().getType();
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantOp::create(rewriter, loc, index,
                                     rewriter.getIntegerAttr(index, value));
  };
  Value zero = constant(0), one = constant(1), blockSize = constant(block);
  auto outer = scf::ForOp::create(
      rewriter, loc, zero, constant(blocks), one, loop.getInitArgs(),
      [&](OpBuilder &b, Location l, Value blockIndex, ValueRange running) {
        SmallVector<Value> zeros;
        for (Value value : running)
          zeros.push_back(arith::ConstantOp::create(
              b, l, value.getType(), b.getZeroAttr(value.getType())));
        auto inner = scf::ForOp::create(
            b, l, zero, blockSize, one, zeros,
            [&](OpBuilder &ib, Location il, Value j, ValueRange partial) {
              Value k = arith::AddIOp::create(
                  ib, il, arith::MulIOp::create(ib, il, blockIndex, blockSize),
                  j);
              IRMapping map;
              map.map(loop.getInductionVar(), k);
              map.map(loop.getRegionIterArgs(), partial);
              for (Operation &op : loop.getBody()->without_terminator())
                ib.clone(op, map);
              SmallVector<Value> next;
              for (Value value : loop.getBody()->getTerminator()->getOperands())
                next.push_back(map.lookupOrDefault(value));
              scf::YieldOp::create(ib, il, next);
            });
        SmallVector<Value> next;
        for (auto [sum, value, blockSum] :
             llvm::zip(sums, running, inner.getResults()))
          next.push_back(arith::AddFOp::create(b, l, value, blockSum,
                                               sum.getFastmathAttr()));
        scf::YieldOp::create(b, l, next);
      });
  rewriter.replaceOp(loop, outer.getResults());
}

struct BlockLoopSumsPass : lcc::impl::BlockLoopSumsBase<BlockLoopSumsPass> {
  void runOnOperation() override {
    SmallVector<std::pair<scf::ForOp, SmallVector<arith::AddFOp>>> loops;
    getOperation().walk([&](scf::ForOp loop) {
      std::optional<int64_t> trips = tripCountFromZero(loop);
      if (!trips || *trips < kMinTripCount || lcc::summationBlock(*trips) == 1)
        return;
      if (std::optional<SmallVector<arith::AddFOp>> sums = runningSums(loop))
        loops.push_back({loop, std::move(*sums)});
    });
    IRRewriter rewriter(&getContext());
    for (auto &[loop, sums] : loops)
      blockRunningSums(rewriter, loop,
                       lcc::summationBlock(*tripCountFromZero(loop)), sums);
  }
};

} // namespace
