//===- MaskTilesTest.cpp - the mask block table against MLIR's folders ----===//
//
// A tile the table calls hidden is never read, so a wrong 0 is a silent
// wrong answer. Random mask regions (arith on b, h, i, j and constants)
// are tabled by computeMaskTileTable and checked tile by tile against
// MLIR's own constant folders run at every position: a hidden tile must
// hold no visible position and a visible one must hold one (the budget is
// never reached at these sizes), and a tile read without its mask must be
// visible at every position.
//
//===----------------------------------------------------------------------===//

#include "passes/LowerToLinalg/MaskTiles.h"
#include "passes/LowerToLinalg/RegionArithmetic.h"

#include "dialects/Attn/IR/AttnDialect.h"
#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/DenseMap.h"

#include <gtest/gtest.h>

#include <optional>
#include <random>

using namespace mlir;
using namespace lcc::lowering;

namespace {

/// Builds random mask bodies from the ops the table evaluates.
class RandomMask {
public:
  RandomMask(OpBuilder &b, Location loc, Block &block, std::mt19937_64 &rng)
      : b(b), loc(loc), block(block), rng(rng) {}

  Value boolean(int depth) {
    switch (pick(depth > 0 ? 5 : 1)) {
    case 0:
      return compare(depth);
    case 1:
    case 2: {
      Value x = boolean(depth - 1), y = boolean(depth - 1);
      switch (pick(3)) {
      case 0:
        return arith::AndIOp::create(b, loc, x, y);
      case 1:
        return arith::OrIOp::create(b, loc, x, y);
      default:
        return arith::XOrIOp::create(b, loc, x, y);
      }
    }
    case 3:
      return arith::SelectOp::create(b, loc, boolean(depth - 1),
                                     boolean(depth - 1), boolean(depth - 1));
    default: {
      // The low bit of an integer.
      Value wide =
          arith::IndexCastOp::create(b, loc, b.getI64Type(), integer(depth));
      return arith::TruncIOp::create(b, loc, b.getI1Type(), wide);
    }
    }
  }

private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); }

  Value compare(int depth) {
    auto p = static_cast<arith::CmpIPredicate>(pick(10));
    return arith::CmpIOp::create(b, loc, p, integer(depth), integer(depth));
  }

  Value integer(int depth) {
    int choice = pick(depth > 0 ? 6 : 2);
    if (choice == 0)
      return block.getArgument(pick(4));
    if (choice == 1)
      // Small values around 0 and -1, and now and then the most negative,
      // which divided by -1 overflows.
      return arith::ConstantIndexOp::create(
          b, loc, pick(20) ? pick(50) - 12 : INT64_MIN);
    if (choice == 2 || choice == 3) {
      Value x = integer(depth - 1), y = integer(depth - 1);
      switch (pick(17)) {
      case 0:
        return arith::AddIOp::create(b, loc, x, y);
      case 1:
        return arith::SubIOp::create(b, loc, x, y);
      case 2:
        return arith::MulIOp::create(b, loc, x, y);
      case 3:
        return arith::DivSIOp::create(b, loc, x, y);
      case 4:
        return arith::DivUIOp::create(b, loc, x, y);
      case 5:
        return arith::RemSIOp::create(b, loc, x, y);
      case 6:
        return arith::RemUIOp::create(b, loc, x, y);
      case 7:
        return arith::FloorDivSIOp::create(b, loc, x, y);
      case 8:
        return arith::CeilDivSIOp::create(b, loc, x, y);
      case 9:
        return arith::MaxSIOp::create(b, loc, x, y);
      case 10:
        return arith::MinSIOp::create(b, loc, x, y);
      case 11:
        return arith::MaxUIOp::create(b, loc, x, y);
      case 12:
        return arith::AndIOp::create(b, loc, x, y);
      case 13:
        return arith::OrIOp::create(b, loc, x, y);
      case 14:
        return arith::XOrIOp::create(b, loc, x, y);
      case 15:
        return arith::CeilDivUIOp::create(b, loc, x, y);
      default:
        return arith::MinUIOp::create(b, loc, x, y);
      }
    }
    if (choice == 4) {
      if (pick(2)) // true is 1
        return arith::IndexCastOp::create(
            b, loc, b.getIndexType(),
            arith::ExtUIOp::create(b, loc, b.getI64Type(), boolean(0)));
      // true is -1: index_cast sign-extends an i1
      return arith::IndexCastOp::create(b, loc, b.getIndexType(), boolean(0));
    }
    return arith::SelectOp::create(b, loc, boolean(depth - 1),
                                   integer(depth - 1), integer(depth - 1));
  }

  OpBuilder &b;
  Location loc;
  Block &block;
  std::mt19937_64 &rng;
};

/// The mask at one position, by MLIR's folders; nullopt where a folder
/// declines.
std::optional<bool> foldAt(MLIRContext *ctx, Region &mask,
                           ArrayRef<int64_t> position) {
  llvm::DenseMap<Value, Attribute> known;
  for (auto [arg, v] : llvm::zip(mask.getArguments(), position))
    known[arg] = IntegerAttr::get(IndexType::get(ctx), v);
  for (Operation &op : mask.front()) {
    if (auto yield = dyn_cast<lcc::attn::YieldOp>(op)) {
      auto value =
          dyn_cast_or_null<IntegerAttr>(known.lookup(yield.getValues()[0]));
      if (!value)
        return std::nullopt;
      return value.getValue().getBoolValue();
    }
    SmallVector<Attribute> operands;
    for (Value operand : op.getOperands())
      operands.push_back(known.lookup(operand));
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      known[op.getResult(0)] = constant.getValue();
      continue;
    }
    SmallVector<OpFoldResult> results;
    if (failed(op.fold(operands, results)) || results.size() != 1)
      return std::nullopt;
    Attribute attr = dyn_cast<Attribute>(results[0]);
    if (!attr)
      attr = known.lookup(cast<Value>(results[0]));
    if (!attr)
      return std::nullopt;
    known[op.getResult(0)] = attr;
  }
  return std::nullopt;
}

std::string describe(Region &region) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::DenseMap<Value, int> id;
  for (BlockArgument a : region.getArguments())
    id[a] = id.size();
  for (Operation &op : region.front()) {
    os << "%" << (op.getNumResults() ? (id[op.getResult(0)] = id.size()) : -1)
       << " = " << op.getName() << " ";
    if (auto c = dyn_cast<arith::ConstantOp>(op))
      os << c.getValue();
    if (auto c = dyn_cast<arith::CmpIOp>(op))
      os << arith::stringifyCmpIPredicate(c.getPredicate()) << " ";
    for (Value v : op.getOperands())
      os << "%" << id.lookup(v) << " ";
    os << "\n";
  }
  return text;
}

TEST(MaskTiles, TableAgreesWithTheFoldersOnRandomMasks) {
  DialectRegistry registry;
  registry.insert<arith::ArithDialect, lcc::attn::AttnDialect>();
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  OpBuilder b(&ctx);
  Location loc = b.getUnknownLoc();
  std::mt19937_64 rng(20261201);
  MaskTiling tiling{2, 2, 23, 19, 4, 5, false};
  int checked = 0, hiddenSeen = 0, fullSeen = 0, declined = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    tiling.causal = trial % 3 == 0;
    // Every fourth trial places its queries and keys (a ring attention's
    // block): every other one of those in two chunks, not consecutive, whose
    // tiles' hulls the table may class less sharply (never wrongly).
    bool placed = trial % 4 == 3, twoChunks = placed && trial % 8 == 7;
    auto positionsOf = [&](int64_t length) {
      std::vector<int64_t> positions;
      int64_t first = rng() % 40, second = first + rng() % 60;
      for (int64_t i = 0; i < length; ++i)
        positions.push_back(
            twoChunks && i >= length / 2 ? second + i - length / 2 : first + i);
      return positions;
    };
    tiling.queryPositions =
        placed ? positionsOf(tiling.querySeq) : std::vector<int64_t>();
    tiling.keyPositions =
        placed ? positionsOf(tiling.keySeq) : std::vector<int64_t>();
    auto at = [](const std::vector<int64_t> &positions, int64_t i) {
      return positions.empty() ? i : positions[i];
    };
    Region region;
    Block *block = new Block();
    region.push_back(block);
    for (int a = 0; a < 4; ++a)
      block->addArgument(b.getIndexType(), loc);
    b.setInsertionPointToEnd(block);
    Value visible = RandomMask(b, loc, *block, rng).boolean(3);
    lcc::attn::YieldOp::create(b, loc, ValueRange{visible});
    // As the lowering does before it tables a mask: divisions by 0 and -1
    // get their defined results, which the folders then compute too.
    defineRegionArithmetic(region);

    // The truth at every position; the few masks where a folder declines
    // (ceildivsi's folder gives up on some quotients of the most negative
    // value, which the lowering computes) are skipped.
    std::vector<uint8_t> truth;
    bool folded = true;
    for (int64_t bb = 0; bb < tiling.batch && folded; ++bb)
      for (int64_t h = 0; h < tiling.heads && folded; ++h)
        for (int64_t i = 0; i < tiling.querySeq && folded; ++i)
          for (int64_t j = 0; j < tiling.keySeq && folded; ++j) {
            int64_t qi = at(tiling.queryPositions, i),
                    kj = at(tiling.keyPositions, j);
            std::optional<bool> v = foldAt(&ctx, region, {bb, h, qi, kj});
            folded = v.has_value();
            truth.push_back(v.value_or(false) && (!tiling.causal || kj <= qi));
          }
    if (!folded) {
      ++declined;
      continue;
    }
    std::string why;
    FailureOr<MaskTileTable> table = computeMaskTileTable(&region, tiling, why);
    ASSERT_TRUE(succeeded(table)) << why;
    if (!twoChunks)
      EXPECT_EQ(table->undecidedTiles, 0);
    // Per tile: is some position visible, is every one (and none padded)?
    auto classify = [&](int64_t firstGroup, int64_t groups, int64_t qt,
                        int64_t kt) {
      bool any = false, all = (kt + 1) * 5 <= 19;
      for (int64_t g = firstGroup; g < firstGroup + groups; ++g)
        for (int64_t i = qt * 4; i < std::min<int64_t>(qt * 4 + 4, 23); ++i)
          for (int64_t j = kt * 5; j < std::min<int64_t>(kt * 5 + 5, 19); ++j) {
            bool seen = truth[(g * 23 + i) * 19 + j] != 0;
            any |= seen;
            all &= seen;
          }
      return std::make_pair(any, all);
    };
    int64_t groups = table->perBatchHead ? 4 : 1;
    for (int64_t group = 0; group < groups; ++group)
      for (int64_t qt = 0; qt < table->queryTiles; ++qt)
        for (int64_t kt = 0; kt < table->keyTiles; ++kt) {
          // A table shared by every (b, h) classes a tile for all of them.
          auto [any, all] = table->perBatchHead ? classify(group, 1, qt, kt)
                                                : classify(0, 4, qt, kt);
          uint8_t entry =
              table
                  ->visible[(group * table->queryTiles + qt) * table->keyTiles +
                            kt];
          std::string where = describe(region) + "trial " +
                              std::to_string(trial) + " group " +
                              std::to_string(group) + " tile " +
                              std::to_string(qt) + "," + std::to_string(kt);
          // Hidden exactly when nothing is visible (only when nothing is,
          // for a tile of two chunks); wholly visible only when every
          // position is.
          if (twoChunks)
            ASSERT_TRUE(entry != kHiddenTile || !any) << where;
          else
            ASSERT_EQ(entry == kHiddenTile, !any) << where;
          if (entry == kFullTile)
            ASSERT_TRUE(all) << where;
          hiddenSeen += entry == kHiddenTile;
          fullSeen += entry == kFullTile;
        }
    ++checked;
  }
  // The generator must exercise both outcomes, or the test says nothing.
  EXPECT_GT(checked, 800);
  EXPECT_LT(declined, 100);
  EXPECT_GT(hiddenSeen, 500);
  EXPECT_GT(fullSeen, 500);
}

} // namespace
