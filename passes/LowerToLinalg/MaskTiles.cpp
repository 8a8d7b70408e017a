//===- MaskTiles.cpp - which key tiles a mask region hides ----------------===//

#include "passes/LowerToLinalg/MaskTiles.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/APInt.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace lcc::lowering;

namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
/// Positions evaluated one by one, at most, per attention.
constexpr int64_t kPointBudget = int64_t(1) << 26;
/// Entries of a block table, at most: 4 MiB of constant in the artifact
/// (seq 128K in tiles of 64 for a mask of i and j only).
constexpr int64_t kMaxTableEntries = int64_t(1) << 22;

/// The values an integer may take: every value in [lo, hi]. An i1 is
/// [0, 0] (false), [1, 1] (true) or [0, 1] (either).
struct Interval {
  int64_t lo, hi;
  static Interval point(int64_t v) { return {v, v}; }
  static Interval full() { return {kMin, kMax}; }
  bool isPoint() const { return lo == hi; }
  bool nonNegative() const { return lo >= 0; }
};

Interval hull(Interval a, Interval b) {
  return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
}

constexpr Interval kFalse{0, 0}, kTrue{1, 1}, kEither{0, 1};

/// The interval of f over the four corners, f monotone in each argument
/// on the given intervals; any overflow gives the full range.
template <typename F> Interval corners(Interval a, Interval b, F f) {
  int64_t lo = kMax, hi = kMin;
  for (int64_t x : {a.lo, a.hi})
    for (int64_t y : {b.lo, b.hi}) {
      std::optional<int64_t> v = f(x, y);
      if (!v)
        return Interval::full();
      lo = std::min(lo, *v);
      hi = std::max(hi, *v);
    }
  return {lo, hi};
}

std::optional<int64_t> checkedAdd(int64_t x, int64_t y) {
  int64_t r;
  if (__builtin_add_overflow(x, y, &r))
    return std::nullopt;
  return r;
}
std::optional<int64_t> checkedSub(int64_t x, int64_t y) {
  int64_t r;
  if (__builtin_sub_overflow(x, y, &r))
    return std::nullopt;
  return r;
}
std::optional<int64_t> checkedMul(int64_t x, int64_t y) {
  int64_t r;
  if (__builtin_mul_overflow(x, y, &r))
    return std::nullopt;
  return r;
}

int64_t floorDiv(int64_t x, int64_t y) {
  int64_t q = x / y;
  return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
}
int64_t ceilDiv(int64_t x, int64_t y) {
  int64_t q = x / y;
  return (x % y != 0 && ((x < 0) == (y < 0))) ? q + 1 : q;
}

/// Signed division of every kind, by an interval without zero: monotone
/// in each argument, so the corners bound it.
template <typename F> Interval divide(Interval a, Interval b, F f) {
  if (b.lo <= 0 && b.hi >= 0)
    return Interval::full();
  return corners(a, b, [&](int64_t x, int64_t y) -> std::optional<int64_t> {
    if (x == kMin && y == -1)
      return std::nullopt;
    return f(x, y);
  });
}

/// x mod c for x in `a`, c > 0 a constant (the sign of x, as remsi).
Interval remainder(Interval a, int64_t c) {
  if (a.lo < 0 && a.hi > 0)
    return {-(c - 1), c - 1};
  // One sign throughout: within one period the remainders keep their order.
  if (a.hi - a.lo < c && a.lo % c <= a.hi % c)
    return {a.lo % c, a.hi % c};
  return a.lo >= 0 ? Interval{0, c - 1} : Interval{-(c - 1), 0};
}

/// Every kind of integer division and remainder, over intervals.
Interval division(Operation *op, Interval a, Interval b) {
  auto truncating = [](int64_t x, int64_t y) { return x / y; };
  bool isUnsigned = isa<arith::DivUIOp, arith::CeilDivUIOp, arith::RemUIOp>(op);
  // Unsigned division agrees with signed division on non-negative values.
  if (isUnsigned && (!a.nonNegative() || !b.nonNegative()))
    return Interval::full();
  if (isa<arith::RemSIOp, arith::RemUIOp>(op))
    return b.isPoint() && b.lo > 0 ? remainder(a, b.lo) : Interval::full();
  if (isa<arith::FloorDivSIOp>(op))
    return divide(a, b, floorDiv);
  if (isa<arith::CeilDivSIOp, arith::CeilDivUIOp>(op))
    return divide(a, b, ceilDiv);
  return divide(a, b, truncating);
}

/// One op of the mask, with its operands' and result's slots.
struct Instruction {
  Operation *op;
  SmallVector<unsigned, 3> operands;
  unsigned result;
  unsigned width; // of the result: 1 for i1, 64 for index
};

unsigned widthOf(Type type) {
  if (type.isIndex())
    return 64;
  return type.getIntOrFloatBitWidth();
}

/// Fits a result into its width: values beyond it wrap, so the interval
/// becomes the width's whole range.
Interval fit(Interval v, unsigned width) {
  if (width == 1 || width >= 64)
    return v;
  int64_t lo = -(int64_t(1) << (width - 1)),
          hi = (int64_t(1) << (width - 1)) - 1;
  if (v.lo < lo || v.hi > hi)
    return {lo, hi};
  return v;
}

/// A comparison of operands not both known (known ones are evaluated
/// exactly by exactStep).
Interval compare(arith::CmpIPredicate p, Interval a, Interval b) {
  using P = arith::CmpIPredicate;
  // Unsigned comparisons agree with signed ones on non-negative values.
  bool bothNonNegative = a.nonNegative() && b.nonNegative();
  auto signedLess = [&](Interval x, Interval y, bool orEqual) {
    if (orEqual ? x.hi <= y.lo : x.hi < y.lo)
      return kTrue;
    if (orEqual ? x.lo > y.hi : x.lo >= y.hi)
      return kFalse;
    return kEither;
  };
  switch (p) {
  case P::eq:
    return (a.hi < b.lo || b.hi < a.lo) ? kFalse : kEither;
  case P::ne:
    return (a.hi < b.lo || b.hi < a.lo) ? kTrue : kEither;
  case P::slt:
    return signedLess(a, b, false);
  case P::sle:
    return signedLess(a, b, true);
  case P::sgt:
    return signedLess(b, a, false);
  case P::sge:
    return signedLess(b, a, true);
  case P::ult:
  case P::ule:
  case P::ugt:
  case P::uge:
    if (!bothNonNegative)
      return kEither;
    return compare(p == P::ult   ? P::slt
                   : p == P::ule ? P::sle
                   : p == P::ugt ? P::sgt
                                 : P::sge,
                   a, b);
  }
  return kEither;
}

/// andi, ori or xori of integers wider than i1 (operands not both known).
Interval bitwise(Operation *op, Interval a, Interval b) {
  if (!a.nonNegative() || !b.nonNegative())
    return Interval::full();
  if (isa<arith::AndIOp>(op))
    return {0, std::min(a.hi, b.hi)};
  // Below the next power of two above both.
  int64_t top = std::max(a.hi, b.hi);
  int64_t bound = 1;
  while (bound <= top && bound < (int64_t(1) << 62))
    bound <<= 1;
  return bound > top ? Interval{0, bound - 1} : Interval::full();
}

/// andi, ori or xori of i1 truth values, not both known: one known
/// operand can decide and or or.
Interval logic(Operation *op, Interval a, Interval b) {
  auto known = [](Interval x, int64_t v) { return x.isPoint() && x.lo == v; };
  if (isa<arith::AndIOp>(op) && (known(a, 0) || known(b, 0)))
    return kFalse;
  if (isa<arith::OrIOp>(op) && (known(a, 1) || known(b, 1)))
    return kTrue;
  return kEither;
}

/// The mask compiled to slots: b, h, i, j are slots 0-3.
class MaskProgram {
public:
  /// Fails with `why` on an op it does not model.
  static FailureOr<MaskProgram> compile(Region &mask, std::string &why);

  Interval evaluate(Interval b, Interval h, Interval i, Interval j) {
    slots[0] = b;
    slots[1] = h;
    slots[2] = i;
    slots[3] = j;
    for (const Instruction &inst : program)
      slots[inst.result] = fit(step(inst), inst.width);
    return slots[visible];
  }

private:
  Interval step(const Instruction &inst) const;

  std::vector<Instruction> program;
  std::vector<Interval> slots;
  unsigned visible = 0;
};

/// One op at known operand values, with arith's wrapping semantics and the
/// results RegionArithmetic.h gives divisions by 0 and -1; nullopt for an
/// op it does not know.
std::optional<int64_t> exactStep(Operation *op, ArrayRef<int64_t> values,
                                 unsigned width) {
  auto apint = [&](unsigned n) {
    unsigned w = widthOf(op->getOperand(n).getType());
    return w == 1 ? APInt(1, values[n] & 1)
                  : APInt(w, static_cast<uint64_t>(values[n]), true);
  };
  auto out = [&](const APInt &v) -> int64_t {
    return width == 1 ? static_cast<int64_t>(v.getZExtValue())
                      : v.getSExtValue();
  };
  return llvm::TypeSwitch<Operation *, std::optional<int64_t>>(op)
      .Case([&](arith::AddIOp) { return out(apint(0) + apint(1)); })
      .Case([&](arith::SubIOp) { return out(apint(0) - apint(1)); })
      .Case([&](arith::MulIOp) { return out(apint(0) * apint(1)); })
      .Case<arith::DivSIOp, arith::FloorDivSIOp, arith::CeilDivSIOp,
            arith::RemSIOp>([&](Operation *) -> std::optional<int64_t> {
        APInt x = apint(0), y = apint(1);
        // The results RegionArithmetic.h defines (docs/masks.md).
        bool remainder = isa<arith::RemSIOp>(op);
        if (y.isZero())
          return out(remainder ? x : APInt::getZero(x.getBitWidth()));
        if (y.isAllOnes())
          return out(remainder ? APInt::getZero(x.getBitWidth()) : -x);
        if (isa<arith::DivSIOp>(op))
          return out(x.sdiv(y));
        if (isa<arith::RemSIOp>(op))
          return out(x.srem(y));
        return out(llvm::APIntOps::RoundingSDiv(x, y,
                                                isa<arith::FloorDivSIOp>(op)
                                                    ? APInt::Rounding::DOWN
                                                    : APInt::Rounding::UP));
      })
      .Case<arith::DivUIOp, arith::CeilDivUIOp, arith::RemUIOp>(
          [&](Operation *) -> std::optional<int64_t> {
            APInt x = apint(0), y = apint(1);
            if (y.isZero())
              return out(isa<arith::RemUIOp>(op)
                             ? x
                             : APInt::getZero(x.getBitWidth()));
            if (isa<arith::DivUIOp>(op))
              return out(x.udiv(y));
            if (isa<arith::RemUIOp>(op))
              return out(x.urem(y));
            return out(llvm::APIntOps::RoundingUDiv(x, y, APInt::Rounding::UP));
          })
      .Case([&](arith::MaxSIOp) {
        return out(llvm::APIntOps::smax(apint(0), apint(1)));
      })
      .Case([&](arith::MinSIOp) {
        return out(llvm::APIntOps::smin(apint(0), apint(1)));
      })
      .Case([&](arith::MaxUIOp) {
        return out(llvm::APIntOps::umax(apint(0), apint(1)));
      })
      .Case([&](arith::MinUIOp) {
        return out(llvm::APIntOps::umin(apint(0), apint(1)));
      })
      .Case([&](arith::CmpIOp c) -> std::optional<int64_t> {
        return arith::applyCmpPredicate(c.getPredicate(), apint(0), apint(1))
                   ? 1
                   : 0;
      })
      .Case([&](arith::AndIOp) { return out(apint(0) & apint(1)); })
      .Case([&](arith::OrIOp) { return out(apint(0) | apint(1)); })
      .Case([&](arith::XOrIOp) { return out(apint(0) ^ apint(1)); })
      .Case([&](arith::SelectOp) { return values[0] ? values[1] : values[2]; })
      .Case<arith::ExtUIOp, arith::IndexCastUIOp>(
          [&](Operation *) { return out(apint(0).zextOrTrunc(width)); })
      .Case<arith::ExtSIOp, arith::IndexCastOp, arith::TruncIOp>(
          [&](Operation *) {
            APInt x = apint(0);
            return out(x.getBitWidth() == 1 ? x.zextOrTrunc(1).sext(width)
                                            : x.sextOrTrunc(width));
          })
      .Default([](Operation *) { return std::nullopt; });
}

Interval MaskProgram::step(const Instruction &inst) const {
  auto in = [&](unsigned n) { return slots[inst.operands[n]]; };
  Operation *op = inst.op;
  // Known operands: the exact value, wrapping as arith wraps; an undefined
  // result may be anything.
  if (!isa<arith::ConstantOp>(op) &&
      llvm::all_of(inst.operands,
                   [&](unsigned s) { return slots[s].isPoint(); })) {
    SmallVector<int64_t, 3> values;
    for (unsigned s : inst.operands)
      values.push_back(slots[s].lo);
    std::optional<int64_t> exact = exactStep(op, values, inst.width);
    if (exact)
      return Interval::point(*exact);
    return inst.width == 1 ? kEither : Interval::full();
  }
  return llvm::TypeSwitch<Operation *, Interval>(op)
      .Case([&](arith::ConstantOp c) {
        auto value = cast<IntegerAttr>(c.getValue());
        return Interval::point(inst.width == 1
                                   ? value.getValue().getZExtValue()
                                   : value.getValue().getSExtValue());
      })
      .Case([&](arith::AddIOp) { return corners(in(0), in(1), checkedAdd); })
      .Case([&](arith::SubIOp) {
        Interval a = in(0), b = in(1);
        return corners(a, {b.hi, b.lo}, checkedSub);
      })
      .Case([&](arith::MulIOp) { return corners(in(0), in(1), checkedMul); })
      .Case<arith::DivSIOp, arith::FloorDivSIOp, arith::CeilDivSIOp,
            arith::DivUIOp, arith::CeilDivUIOp, arith::RemSIOp, arith::RemUIOp>(
          [&](Operation *) { return division(op, in(0), in(1)); })
      .Case([&](arith::MaxSIOp) {
        return Interval{std::max(in(0).lo, in(1).lo),
                        std::max(in(0).hi, in(1).hi)};
      })
      .Case([&](arith::MinSIOp) {
        return Interval{std::min(in(0).lo, in(1).lo),
                        std::min(in(0).hi, in(1).hi)};
      })
      .Case<arith::MaxUIOp, arith::MinUIOp>([&](Operation *) {
        Interval a = in(0), b = in(1);
        if (!a.nonNegative() || !b.nonNegative())
          return Interval::full();
        return isa<arith::MaxUIOp>(op)
                   ? Interval{std::max(a.lo, b.lo), std::max(a.hi, b.hi)}
                   : Interval{std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
      })
      .Case([&](arith::CmpIOp c) {
        return compare(c.getPredicate(), in(0), in(1));
      })
      .Case<arith::AndIOp, arith::OrIOp, arith::XOrIOp>([&](Operation *) {
        return inst.width == 1 ? logic(op, in(0), in(1))
                               : bitwise(op, in(0), in(1));
      })
      .Case([&](arith::SelectOp) {
        Interval c = in(0);
        if (c.isPoint())
          return c.lo ? in(1) : in(2);
        return hull(in(1), in(2));
      })
      .Case<arith::ExtUIOp, arith::IndexCastUIOp>([&](Operation *) {
        Interval a = in(0);
        if (a.nonNegative())
          return a;
        unsigned from = widthOf(op->getOperand(0).getType());
        if (from >= 64)
          return Interval::full();
        return Interval{0, (int64_t(1) << from) - 1};
      })
      .Case([&](arith::ExtSIOp e) {
        Interval a = in(0);
        if (widthOf(e.getIn().getType()) == 1)
          return Interval{-a.hi, -a.lo}; // true sign-extends to -1
        return a;
      })
      .Case<arith::IndexCastOp, arith::TruncIOp>([&](Operation *) {
        Interval a = in(0);
        // To i1: the low bit, either value. From i1: sign-extended.
        if (inst.width == 1)
          return kEither;
        if (widthOf(op->getOperand(0).getType()) == 1)
          return Interval{-a.hi, -a.lo};
        return a; // fit() wraps if it must
      })
      .Default([](Operation *) { return Interval::full(); });
}

FailureOr<MaskProgram> MaskProgram::compile(Region &mask, std::string &why) {
  MaskProgram p;
  llvm::DenseMap<Value, unsigned> slotOf;
  for (BlockArgument arg : mask.getArguments()) {
    unsigned slot = slotOf.size();
    slotOf[arg] = slot;
  }
  // A value from outside the region is a constant that folding hoisted
  // out of it (the verifier allows nothing else): its instruction comes
  // first.
  auto slotFor = [&](Value v) -> unsigned {
    auto it = slotOf.find(v);
    if (it != slotOf.end())
      return it->second;
    unsigned slot = slotOf.size();
    slotOf[v] = slot;
    p.program.push_back({v.getDefiningOp(), {}, slot, widthOf(v.getType())});
    return slot;
  };
  for (Operation &op : mask.front()) {
    for (Value operand : op.getOperands())
      if (!slotOf.count(operand) &&
          !isa_and_nonnull<arith::ConstantOp>(operand.getDefiningOp())) {
        why = "its mask reads a value defined outside it";
        return failure();
      }
    if (auto yield = dyn_cast<lcc::attn::YieldOp>(op)) {
      p.visible = slotFor(yield.getValues()[0]);
      continue;
    }
    bool known =
        isa<arith::ConstantOp, arith::AddIOp, arith::SubIOp, arith::MulIOp,
            arith::DivSIOp, arith::FloorDivSIOp, arith::CeilDivSIOp,
            arith::DivUIOp, arith::CeilDivUIOp, arith::RemSIOp, arith::RemUIOp,
            arith::MaxSIOp, arith::MinSIOp, arith::MaxUIOp, arith::MinUIOp,
            arith::CmpIOp, arith::AndIOp, arith::OrIOp, arith::XOrIOp,
            arith::SelectOp, arith::ExtUIOp, arith::ExtSIOp, arith::IndexCastOp,
            arith::IndexCastUIOp, arith::TruncIOp>(op);
    Type type = op.getNumResults() == 1 ? op.getResult(0).getType() : Type();
    if (!known || !type || !type.isIntOrIndex()) {
      why = "its mask computes with '" + op.getName().getStringRef().str() +
            "', which the tile table does not evaluate";
      return failure();
    }
    // An i1 is modelled as a truth value only where it is one.
    unsigned width = widthOf(type);
    if (width == 1 &&
        !isa<arith::ConstantOp, arith::CmpIOp, arith::AndIOp, arith::OrIOp,
             arith::XOrIOp, arith::SelectOp, arith::TruncIOp>(op)) {
      why = "its mask computes i1 values with '" +
            op.getName().getStringRef().str() +
            "', which the tile table does not evaluate";
      return failure();
    }
    Instruction inst{&op, {}, 0, width};
    for (Value operand : op.getOperands())
      inst.operands.push_back(slotFor(operand));
    inst.result = slotOf.size();
    slotOf[op.getResult(0)] = inst.result;
    p.program.push_back(inst);
  }
  p.slots.resize(slotOf.size(), Interval::point(0));
  return p;
}

/// Whether some position of the tile is visible, one position at a time;
/// nullopt once `budget` evaluations are spent.
std::optional<bool> anyVisible(MaskProgram &program, Interval b, Interval h,
                               Interval rows, Interval cols, bool causal,
                               int64_t &budget) {
  for (int64_t i = rows.lo; i <= rows.hi; ++i) {
    int64_t last = causal ? std::min(cols.hi, i) : cols.hi;
    for (int64_t j = cols.lo; j <= last; ++j) {
      if (budget-- <= 0)
        return std::nullopt;
      // Undefined at this position (a division by zero): may be visible.
      if (program.evaluate(b, h, Interval::point(i), Interval::point(j)).hi)
        return true;
    }
  }
  return false;
}

} // namespace

MaskTiling MaskTiling::of(Value query, Value key, int64_t queryTile,
                          int64_t keyTile, bool causal) {
  auto q = cast<RankedTensorType>(query.getType());
  auto k = cast<RankedTensorType>(key.getType());
  return {q.getDimSize(0), q.getDimSize(1), q.getDimSize(2), k.getDimSize(2),
          queryTile,       keyTile,         causal};
}

namespace {

/// The positions of tile `index` of `tile` of `length` entries: its
/// indices, or where `positions` (when given) puts them. Positions that
/// are not consecutive give their hull, whose classes hold for every
/// position within it.
Interval tilePositions(ArrayRef<int64_t> positions, int64_t index, int64_t tile,
                       int64_t length) {
  int64_t first = index * tile, last = std::min(first + tile, length) - 1;
  if (positions.empty())
    return Interval{first, last};
  ArrayRef<int64_t> mine = positions.slice(first, last - first + 1);
  return Interval{*llvm::min_element(mine), *llvm::max_element(mine)};
}

} // namespace

FailureOr<MaskTileTable>
lcc::lowering::computeMaskTileTable(Region *mask, const MaskTiling &t,
                                    std::string &why) {
  // Without a mask, causality alone: a region that yields true.
  std::optional<MaskProgram> program;
  if (mask) {
    FailureOr<MaskProgram> compiled = MaskProgram::compile(*mask, why);
    if (failed(compiled))
      return failure();
    program = std::move(*compiled);
  }
  MaskTileTable table;
  table.perBatchHead = mask && (!mask->getArgument(0).use_empty() ||
                                !mask->getArgument(1).use_empty());
  table.queryTiles = llvm::divideCeil(t.querySeq, t.queryTile);
  table.keyTiles = llvm::divideCeil(t.keySeq, t.keyTile);
  int64_t groups = table.perBatchHead ? t.batch * t.heads : 1;
  // Sizes are below 2^31 (ModelChecks), so the product fits in 128 bits.
  __int128 entries =
      __int128(groups) * table.queryTiles * __int128(table.keyTiles);
  if (entries > kMaxTableEntries) {
    why = "its block table would have " + std::to_string(int64_t(entries)) +
          " entries, more than the " + std::to_string(kMaxTableEntries) +
          " lcc embeds";
    return failure();
  }
  std::vector<Interval> queryTiles, keyTiles;
  for (int64_t qt = 0; qt < table.queryTiles; ++qt)
    queryTiles.push_back(
        tilePositions(t.queryPositions, qt, t.queryTile, t.querySeq));
  for (int64_t kt = 0; kt < table.keyTiles; ++kt)
    keyTiles.push_back(tilePositions(t.keyPositions, kt, t.keyTile, t.keySeq));
  table.visible.assign(groups * table.queryTiles * table.keyTiles, 0);
  int64_t budget = kPointBudget;
  size_t entry = 0;
  for (int64_t g = 0; g < groups; ++g) {
    Interval b = table.perBatchHead ? Interval::point(g / t.heads)
                                    : Interval{0, t.batch - 1};
    Interval h = table.perBatchHead ? Interval::point(g % t.heads)
                                    : Interval{0, t.heads - 1};
    for (int64_t qt = 0; qt < table.queryTiles; ++qt) {
      Interval rows = queryTiles[qt];
      for (int64_t kt = 0; kt < table.keyTiles; ++kt, ++entry) {
        Interval cols = keyTiles[kt];
        // Tiles wholly after the query tile are never visited when causal.
        if (t.causal && cols.lo > rows.hi)
          continue;
        Interval whole =
            program ? program->evaluate(b, h, rows, cols) : Interval::point(1);
        if (whole.hi == 0)
          continue;
        if (whole.lo == 1) {
          // True everywhere: some point is visible (causal: one with
          // j <= i, which a tile starting at or before the last query
          // holds), and maybe every point is.
          bool padded = (kt + 1) * t.keyTile > t.keySeq;
          bool diagonal = t.causal && cols.hi > rows.lo;
          table.visible[entry] = padded || diagonal ? kPartialTile : kFullTile;
          continue;
        }
        std::optional<bool> some =
            anyVisible(*program, b, h, rows, cols, t.causal, budget);
        if (!some)
          ++table.undecidedTiles;
        table.visible[entry] = some.value_or(true) ? kPartialTile : kHiddenTile;
      }
    }
  }
  table.hiddenTiles = llvm::count(table.visible, kHiddenTile);
  table.fullTiles = llvm::count(table.visible, kFullTile);
  return table;
}
