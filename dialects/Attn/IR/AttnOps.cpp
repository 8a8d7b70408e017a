//===- AttnOps.cpp - attn dialect operations and verifiers ----------------===//
//
// Verifiers name the operand or attribute at fault and quote the expected and
// actual value, so a user can fix a model from the message alone.
//
//===----------------------------------------------------------------------===//

#include "dialects/Attn/IR/AttnOps.h"
#include "dialects/Attn/IR/Verification.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/Format.h"

#include <cmath>

using namespace mlir;
using namespace lcc::attn;
using namespace lcc::attn::detail;

//===----------------------------------------------------------------------===//
// Shape checking helpers (Verification.h)
//===----------------------------------------------------------------------===//

namespace lcc::attn::detail {

LogicalResult verifyAttentionOperands(Operation *op, Value query, Value key,
                                      Value value, Value result, bool sameSeq,
                                      StringRef queryName) {
  ShapeChecker check(op);
  NamedTensor q(queryName, query), k("key", key), v("value", value),
      r("result", result);
  if (failed(check.rank(q, 4, kAttentionLayout)) ||
      failed(check.rank(k, 4, kAttentionLayout)) ||
      failed(check.rank(v, 4, kAttentionLayout)) ||
      failed(check.rank(r, 4, kAttentionLayout)))
    return failure();
  Type elt = q.elementType();
  if (failed(check.elementType(k, elt)) || failed(check.elementType(v, elt)) ||
      failed(check.elementType(r, elt)))
    return failure();
  if (failed(check.dim(k, 0, "batch", q.dim(0))) ||
      failed(check.dim(k, 1, "heads", q.dim(1))) ||
      failed(check.dim(k, 3, "head_dim", q.dim(3))) ||
      failed(check.dim(v, 0, "batch", q.dim(0))) ||
      failed(check.dim(v, 1, "heads", q.dim(1))) ||
      failed(check.dim(v, 2, "seq", k.dim(2))))
    return failure();
  if (sameSeq && failed(check.dim(k, 2, "seq", q.dim(2))))
    return failure();
  return check.shape(r, {q.dim(0), q.dim(1), q.dim(2), v.dim(3)});
}

/// Formats a float attribute value as a user wrote it ("0.5", "1e-05").
std::string formatFloat(double value) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%g", value);
  return text;
}

/// Checks that an optional float attribute is finite and positive.
LogicalResult verifyPositive(Operation *op, StringRef attr,
                             std::optional<APFloat> value) {
  if (!value)
    return success();
  double v = value->convertToDouble();
  if (std::isfinite(v) && v > 0.0)
    return success();
  return op->emitOpError() << "expected '" << attr << "' > 0, got "
                           << formatFloat(v);
}

LogicalResult verifyScale(Operation *op, std::optional<APFloat> scale) {
  return verifyPositive(op, "scale", scale);
}

/// Checks `value >= minimum` for an integer attribute.
LogicalResult verifyAtLeast(Operation *op, StringRef attr, int64_t value,
                            int64_t minimum) {
  if (value >= minimum)
    return success();
  return op->emitOpError() << "expected '" << attr << "' >= " << minimum
                           << ", got " << value;
}

/// Checks `value <= limit` where the limit is a dimension (skipped when the
/// dimension is dynamic).
LogicalResult verifyAtMost(Operation *op, StringRef attr, int64_t value,
                           StringRef limitName, int64_t limit) {
  if (ShapedType::isDynamic(limit) || value <= limit)
    return success();
  return op->emitOpError() << "expected '" << attr << "' <= " << limitName
                           << " (" << limit << "), got " << value;
}

LogicalResult verifyRowChunks(Operation *op, int64_t chunks, Value rows) {
  auto type = cast<RankedTensorType>(rows.getType());
  int64_t count = ShapedType::isDynamic(type.getDimSize(0)) ||
                          ShapedType::isDynamic(type.getDimSize(1))
                      ? ShapedType::kDynamic
                      : type.getDimSize(0) * type.getDimSize(1);
  return failure(
      failed(verifyAtLeast(op, "chunks", chunks,
                           knobs::kAttentionChunks.attributeMinimum())) ||
      failed(verifyAtMost(op, "chunks", chunks, "batch * heads", count)));
}

/// Checks that `region` has one block whose arguments have `argTypes` and
/// whose `attn.yield` yields exactly `yieldTypes`.
LogicalResult verifyBlockSignature(Operation *op, Region &region,
                                   StringRef regionName, TypeRange argTypes,
                                   TypeRange yieldTypes) {
  Block &block = region.front();
  if (block.getNumArguments() != argTypes.size())
    return op->emitOpError() << "expected region '" << regionName
                             << "' to take " << argTypes.size()
                             << " argument(s), got " << block.getNumArguments();
  for (auto [i, arg, expected] :
       llvm::enumerate(block.getArguments(), argTypes)) {
    if (arg.getType() != expected)
      return op->emitOpError()
             << "expected region '" << regionName << "' argument #" << i
             << " of type " << expected << ", got " << arg.getType();
  }
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield)
    return op->emitOpError()
           << "expected region '" << regionName << "' to end with 'attn.yield'";
  if (yield.getValues().size() != yieldTypes.size())
    return op->emitOpError() << "expected region '" << regionName
                             << "' to yield " << yieldTypes.size()
                             << " value(s), got " << yield.getValues().size();
  for (auto [i, value, expected] :
       llvm::enumerate(yield.getValues(), yieldTypes)) {
    if (value.getType() != expected)
      return op->emitOpError()
             << "expected region '" << regionName << "' to yield #" << i
             << " of type " << expected << ", got " << value.getType();
  }
  return success();
}

} // namespace lcc::attn::detail

//===----------------------------------------------------------------------===//
// Enum keywords: `attn.sparse_attention fixed ...`, `attn.feed_forward gelu`
//===----------------------------------------------------------------------===//

namespace {
/// What the custom<EnumKeyword> directive needs to know of one enum.
template <typename AttrT> struct EnumKeywordTraits;

template <> struct EnumKeywordTraits<SparsePatternAttr> {
  using Enum = SparsePattern;
  static constexpr StringLiteral description = "sparse pattern";
  static std::optional<Enum> symbolize(StringRef s) {
    return symbolizeSparsePattern(s);
  }
  static StringRef stringify(Enum e) { return stringifySparsePattern(e); }
  static constexpr uint64_t maxValue = getMaxEnumValForSparsePattern();
};

template <> struct EnumKeywordTraits<ActivationAttr> {
  using Enum = Activation;
  static constexpr StringLiteral description = "activation";
  static std::optional<Enum> symbolize(StringRef s) {
    return symbolizeActivation(s);
  }
  static StringRef stringify(Enum e) { return stringifyActivation(e); }
  static constexpr uint64_t maxValue = getMaxEnumValForActivation();
};
} // namespace

/// Parses a bare enum keyword, with one error that lists the choices.
template <typename AttrT>
static ParseResult parseEnumKeyword(OpAsmParser &parser, AttrT &attr) {
  using Traits = EnumKeywordTraits<AttrT>;
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseOptionalKeyword(&keyword))
    return parser.emitError(loc) << "expected " << Traits::description;
  std::optional<typename Traits::Enum> value = Traits::symbolize(keyword);
  if (!value) {
    InFlightDiagnostic diag = parser.emitError(loc)
                              << "expected " << Traits::description
                              << " to be one of ";
    for (uint64_t i = 0; i <= Traits::maxValue; ++i)
      diag << (i ? ", '" : "'")
           << Traits::stringify(static_cast<typename Traits::Enum>(i)) << "'";
    return diag << "; got '" << keyword << "'";
  }
  attr = AttrT::get(parser.getContext(), *value);
  return success();
}

template <typename AttrT>
static void printEnumKeyword(OpAsmPrinter &printer, Operation *, AttrT attr) {
  printer << EnumKeywordTraits<AttrT>::stringify(attr.getValue());
}

//===----------------------------------------------------------------------===//
// Mask and score regions: `attn.attention ... mask {...} score {...}`
//===----------------------------------------------------------------------===//

/// Parses the optional `mask` and `score` regions: none, or both (an
/// absent one empty), in that order.
static ParseResult
parseAttentionModifiers(OpAsmParser &parser,
                        SmallVectorImpl<std::unique_ptr<Region>> &regions) {
  auto mask = std::make_unique<Region>();
  auto score = std::make_unique<Region>();
  bool any = false;
  for (auto [keyword, region] : {std::make_pair("mask", mask.get()),
                                 std::make_pair("score", score.get())}) {
    if (failed(parser.parseOptionalKeyword(keyword)))
      continue;
    if (parser.parseRegion(*region))
      return failure();
    any = true;
  }
  if (any) {
    regions.push_back(std::move(mask));
    regions.push_back(std::move(score));
  }
  return success();
}

static void printAttentionModifiers(OpAsmPrinter &printer, Operation *,
                                    MutableArrayRef<Region> regions) {
  if (regions.size() != 2)
    return;
  for (auto [keyword, region] : {std::make_pair("mask", &regions[0]),
                                 std::make_pair("score", &regions[1])}) {
    if (region->empty())
      continue;
    // The directive starts after a space; the second region needs its own.
    if (region == &regions[1] && !regions[0].empty())
      printer << " ";
    printer << keyword << " ";
    printer.printRegion(*region, /*printEntryBlockArgs=*/true);
  }
}

//===----------------------------------------------------------------------===//
// Attention forms
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::verify() {
  if (getSharedQk() && getKey() != getQuery())
    return emitOpError("expected key to be the same value as query when "
                       "'shared_qk' is set");
  if (getSharedQk() && !getPositions().empty())
    return emitOpError("expected no positions with 'shared_qk' (a token's "
                       "own score is found by its index)");
  if (failed(verifyAttentionOperands(*this, getQuery(), getKey(), getValue(),
                                     getResult(), /*sameSeq=*/false)) ||
      failed(verifyAttentionPositions(*this, getPositions(), getQuery(),
                                      getKey(),
                                      getCausal() || !getModifiers().empty())))
    return failure();
  if (Value logSumExp = getLogsumexp()) {
    ShapeChecker check(*this);
    NamedTensor q("query", getQuery()), lse("logsumexp", logSumExp);
    // f32 on half operands too: the backward's exp(s - L) needs L to f32.
    if (failed(check.elementType(lse, Float32Type::get(getContext()))) ||
        failed(check.shape(lse, {q.dim(0), q.dim(1), q.dim(2)})))
      return failure();
  }
  return verifyScale(*this, getScale());
}

Region *lcc::attn::detail::modifierRegion(MutableArrayRef<Region> modifiers,
                                          unsigned index) {
  if (modifiers.size() != 2 || modifiers[index].empty())
    return nullptr;
  return &modifiers[index];
}

Region *AttentionOp::getMaskRegion() {
  return modifierRegion(getModifiers(), 0);
}

Region *AttentionOp::getScoreRegion() {
  return modifierRegion(getModifiers(), 1);
}

/// The ops a mask or score region may hold: scalar `arith` and `math`, so
/// that a mask can be evaluated at compile time and inlined into a kernel.
static LogicalResult verifyModifierBody(Operation *op, Region &region,
                                        StringRef name) {
  for (Operation &inner : region.front()) {
    if (isa<YieldOp>(inner))
      continue;
    StringRef dialect = inner.getDialect() ? inner.getDialect()->getNamespace()
                                           : StringRef("unregistered");
    if ((dialect != "arith" && dialect != "math") || inner.getNumRegions() != 0)
      return op->emitOpError()
             << "expected only 'arith' and 'math' ops in region '" << name
             << "', got '" << inner.getName() << "'";
    // Only constants may come from outside (folding hoists them there).
    for (Value operand : inner.getOperands()) {
      if (operand.getParentRegion() == &region)
        continue;
      Operation *def = operand.getDefiningOp();
      if (!def || def->getName().getStringRef() != "arith.constant")
        return op->emitOpError()
               << "expected region '" << name
               << "' to use only its arguments, its own values and constants";
    }
    for (Type type : inner.getResultTypes())
      if (!type.isIntOrIndexOrFloat())
        return op->emitOpError()
               << "expected scalar values in region '" << name << "', got "
               << type << " from '" << inner.getName() << "'";
  }
  return success();
}

LogicalResult
lcc::attn::detail::verifyAttentionModifiers(Operation *op,
                                            MutableArrayRef<Region> modifiers) {
  unsigned count = modifiers.size();
  if (count == 0)
    return success();
  if (count != 2)
    return op->emitOpError()
           << "expected no regions or two (mask, score), got " << count;
  Builder b(op->getContext());
  Type index = b.getIndexType(), elt = b.getF32Type();
  if (Region *mask = modifierRegion(modifiers, 0)) {
    if (failed(verifyBlockSignature(op, *mask, "mask",
                                    {index, index, index, index},
                                    {b.getI1Type()})) ||
        failed(verifyModifierBody(op, *mask, "mask")))
      return failure();
  }
  if (Region *score = modifierRegion(modifiers, 1)) {
    if (failed(verifyBlockSignature(
            op, *score, "score", {elt, index, index, index, index}, {elt})) ||
        failed(verifyModifierBody(op, *score, "score")))
      return failure();
  }
  return success();
}

LogicalResult
lcc::attn::detail::verifyAttentionPositions(Operation *op, ValueRange positions,
                                            Value query, Value key,
                                            bool readByRegionOrCausal) {
  if (positions.empty())
    return success();
  if (positions.size() != 2)
    return op->emitOpError() << "expected positions of the queries and of the "
                                "keys (two tensors), got "
                             << positions.size();
  if (!readByRegionOrCausal)
    return op->emitOpError("expected a mask or score region or 'causal' to "
                           "read the positions (they change nothing else)");
  ShapeChecker check(op);
  NamedTensor q("query", query), k("key", key);
  NamedTensor queryPositions("query positions", positions[0]),
      keyPositions("key positions", positions[1]);
  if (failed(check.shape(queryPositions, {q.dim(2)})) ||
      failed(check.shape(keyPositions, {k.dim(2)})))
    return failure();
  return success();
}

LogicalResult AttentionOp::verifyRegions() {
  return verifyAttentionModifiers(*this, getModifiers());
}

std::optional<std::pair<int64_t, int64_t>>
lcc::attn::lshHashFactors(int64_t nBuckets) {
  if (nBuckets < 4 || nBuckets % 4 != 0)
    return std::nullopt;
  int64_t first = 2;
  for (int64_t n1 = 2; n1 * n1 <= nBuckets; n1 += 2)
    if (nBuckets % n1 == 0 && (nBuckets / n1) % 2 == 0)
      first = n1;
  return std::make_pair(first, nBuckets / first);
}

LogicalResult lcc::attn::detail::verifyLSHHashing(
    Operation *op, Value queryKey, int64_t nHashes, int64_t bucketSize,
    std::optional<int64_t> nBuckets, bool factorized) {
  if (nBuckets && (failed(verifyAtLeast(op, "n_buckets", *nBuckets, 2)) ||
                   failed(verifyAtMost(op, "n_buckets", *nBuckets,
                                       "the bucket limit", kMaxLSHBuckets))))
    return failure();
  if (nBuckets && *nBuckets % 2 != 0)
    return op->emitOpError()
           << "expected n_buckets to be even (argmax over [xR; -xR]), got "
           << *nBuckets;
  auto type = cast<RankedTensorType>(queryKey.getType());
  int64_t seq = type.getDimSize(2), headDim = type.getDimSize(3);
  if (ShapedType::isDynamic(seq) || ShapedType::isDynamic(headDim))
    return success();
  int64_t buckets = lshBucketCount(seq, bucketSize, nBuckets);
  int64_t columns = buckets / 2;
  if (factorized) {
    auto factors = lshHashFactors(buckets);
    if (!factors)
      return op->emitOpError()
             << "expected n_buckets"
             << (nBuckets ? "" : " (padded seq / bucket_size)")
             << " to be a multiple of 4 with factorized_hash, got " << buckets;
    columns = (factors->first + factors->second) / 2;
  }
  // The rotations [head_dim, n_hashes, columns] are a constant of the
  // compiled code.
  APInt count = APInt(128, headDim) * APInt(128, nHashes) * APInt(128, columns);
  if (count.ugt(kMaxRotationValues))
    return op->emitOpError()
           << "expected at most " << kMaxRotationValues
           << " rotation values (head_dim x n_hashes x rotation columns), got "
           << headDim << " x " << nHashes << " x " << columns;
  return success();
}

LogicalResult LSHAttentionOp::verify() {
  if (failed(verifyAttentionOperands(*this, getQueryKey(), getQueryKey(),
                                     getValue(), getResult(),
                                     /*sameSeq=*/true, "query_key")) ||
      failed(verifyAtLeast(*this, "n_hashes", getNHashes(),
                           knobs::kLSHHashes.attributeMinimum())) ||
      failed(verifyAtMost(*this, "n_hashes", getNHashes(),
                          "the hash-round limit", knobs::kLSHHashes.maximum)) ||
      failed(verifyAtLeast(*this, "bucket_size", getBucketSize(),
                           knobs::kLSHBucketSize.attributeMinimum())) ||
      failed(verifyAtLeast(*this, "seed", getSeed(),
                           knobs::kSeed.attributeMinimum())) ||
      failed(verifyRowChunks(*this, getChunks(), getQueryKey())))
    return failure();
  int64_t seq = cast<RankedTensorType>(getQueryKey().getType()).getDimSize(2);
  // A bucket larger than the sequence only pads: every chunk would attend
  // to the whole (padded) sequence, at many times dense attention's cost.
  if (failed(verifyAtMost(*this, "bucket_size", getBucketSize(), "seq", seq)) ||
      failed(verifyLSHHashing(*this, getQueryKey(), getNHashes(),
                              getBucketSize(), getNBuckets(),
                              getFactorizedHash())))
    return failure();
  return verifyScale(*this, getScale());
}

/// Checks that there are no fewer keys than queries: the memory is the
/// keys before the segment.
static LogicalResult verifyMemoryBeforeSegment(Operation *op, int64_t querySeq,
                                               int64_t keySeq) {
  if (ShapedType::isDynamic(querySeq) || ShapedType::isDynamic(keySeq) ||
      keySeq >= querySeq)
    return success();
  return op->emitOpError()
         << "expected key seq >= query seq (the first key seq - query seq "
            "keys are the memory), got key seq "
         << keySeq << " and query seq " << querySeq;
}

LogicalResult lcc::attn::detail::verifyRelativeAttention(
    Operation *op, Value query, Value key, Value value, Value pos, Value u,
    Value w, Value result, Value logSumExp, Value queryOffset,
    std::optional<APFloat> scale, std::optional<int64_t> clampLen,
    std::optional<int64_t> sameLength) {
  if (failed(verifyAttentionOperands(op, query, key, value, result,
                                     /*sameSeq=*/false)))
    return failure();
  ShapeChecker check(op);
  NamedTensor q("query", query), k("key", key), p("pos", pos), bu("u", u),
      bw("w", w);
  int64_t querySeq = q.dim(2), keySeq = k.dim(2);
  if (!queryOffset && failed(verifyMemoryBeforeSegment(op, querySeq, keySeq)))
    return failure();
  for (const NamedTensor *t : {&p, &bu, &bw})
    if (failed(check.elementType(*t, q.elementType())))
      return failure();
  // Placed by an offset, the queries may meet any distance: pos holds as
  // many as it likes (at least one).
  if (queryOffset && !ShapedType::isDynamic(p.dim(1)) && p.dim(1) < 1)
    return op->emitOpError("expected pos to hold at least one encoding");
  if (failed(check.shape(
          p, {q.dim(1), queryOffset ? p.dim(1) : keySeq, q.dim(3)})) ||
      failed(check.shape(bu, {q.dim(1), q.dim(3)})) ||
      failed(check.shape(bw, {q.dim(1), q.dim(3)})))
    return failure();
  if (logSumExp) {
    // f32 on half operands too, as attention's.
    NamedTensor lse("logsumexp", logSumExp);
    if (failed(check.elementType(lse, Float32Type::get(op->getContext()))) ||
        failed(check.shape(lse, {q.dim(0), q.dim(1), q.dim(2)})))
      return failure();
  }
  if (clampLen && failed(verifyAtLeast(op, "clamp_len", *clampLen, 0)))
    return failure();
  if (sameLength && failed(verifyAtLeast(op, "same_length", *sameLength, 1)))
    return failure();
  return verifyScale(op, scale);
}

LogicalResult RelativeAttentionOp::verify() {
  return verifyRelativeAttention(*this, getQuery(), getKey(), getValue(),
                                 getPos(), getU(), getW(), getResult(),
                                 getLogsumexp(), getQueryOffset(), getScale(),
                                 getClampLen(), getSameLength());
}

LogicalResult lcc::attn::detail::verifyAdaptiveSpanAttention(
    Operation *op, Value query, Value key, Value value, Value z, Value result,
    Value logNormalizer, Value queryOffset, int64_t maxSpan, int64_t ramp,
    std::optional<APFloat> scale) {
  if (failed(verifyAttentionOperands(op, query, key, value, result,
                                     /*sameSeq=*/false)))
    return failure();
  ShapeChecker check(op);
  NamedTensor q("query", query), k("key", key), span("z", z);
  int64_t querySeq = q.dim(2), keySeq = k.dim(2);
  if (!queryOffset && failed(verifyMemoryBeforeSegment(op, querySeq, keySeq)))
    return failure();
  // The span and the softmax's normaliser are f32 on half operands too.
  Type f32 = Float32Type::get(op->getContext());
  if (failed(check.elementType(span, f32)) ||
      failed(check.shape(span, {q.dim(1)})))
    return failure();
  if (logNormalizer) {
    NamedTensor n("log_normalizer", logNormalizer);
    if (failed(check.elementType(n, f32)) ||
        failed(check.shape(n, {q.dim(0), q.dim(1), q.dim(2)})))
      return failure();
  }
  if (failed(verifyAtLeast(op, "max_span", maxSpan, 1)) ||
      failed(verifyAtLeast(op, "ramp", ramp, 1)))
    return failure();
  // Spans and distances meet in f32 arithmetic: keep them exact there.
  constexpr int64_t kExactInF32 = int64_t(1) << 24;
  if (failed(verifyAtMost(op, "max_span", maxSpan, "2^24", kExactInF32)) ||
      failed(verifyAtMost(op, "ramp", ramp, "2^24", kExactInF32)))
    return failure();
  return verifyScale(op, scale);
}

LogicalResult AdaptiveSpanAttentionOp::verify() {
  return verifyAdaptiveSpanAttention(*this, getQuery(), getKey(), getValue(),
                                     getZ(), getResult(), getLogNormalizer(),
                                     getQueryOffset(), getMaxSpan(), getRamp(),
                                     getScale());
}

LogicalResult SinusoidalEncodingOp::verify() {
  ShapeChecker check(*this);
  NamedTensor result("result", getResult());
  if (failed(check.rank(result, 2, "[positions, dim]")) ||
      failed(check.elementType(result, Float32Type::get(getContext()))))
    return failure();
  int64_t dim = result.dim(1);
  if (!ShapedType::isDynamic(dim) && dim % 2 != 0)
    return emitOpError() << "expected an even dim (sines, then cosines), got "
                         << dim;
  return success();
}

LogicalResult SparseAttentionOp::verify() {
  if (failed(verifyAttentionOperands(*this, getQuery(), getKey(), getValue(),
                                     getResult(), /*sameSeq=*/true)))
    return failure();
  int64_t seq = cast<RankedTensorType>(getQuery().getType()).getDimSize(2);
  if (failed(verifyAtLeast(*this, "block", getBlock(),
                           knobs::kSparseBlock.attributeMinimum())) ||
      failed(verifyAtLeast(*this, "stride", getStride(),
                           knobs::kSparseStride.attributeMinimum())) ||
      failed(verifyAtMost(*this, "stride", getStride(), "seq", seq)))
    return failure();
  std::optional<int64_t> summary = getSummary();
  if (getPattern() == SparsePattern::Fixed) {
    if (!summary)
      return emitOpError("expected 'summary' for the fixed pattern");
    if (failed(verifyAtLeast(*this, "summary", *summary,
                             knobs::kSparseSummary.attributeMinimum())) ||
        failed(verifyAtMost(*this, "summary", *summary, "stride", getStride())))
      return failure();
  } else if (summary) {
    return emitOpError("unexpected 'summary' for the strided pattern; it "
                       "applies to the fixed pattern only");
  }
  return verifyScale(*this, getScale());
}

LogicalResult lcc::attn::detail::verifyRoutedAttention(
    Operation *op, Value query, Value key, Value value, Value result,
    Value centroids, int64_t clusters, int64_t window, int64_t seed,
    std::optional<APFloat> scale) {
  if (failed(verifyAttentionOperands(op, query, key, value, result,
                                     /*sameSeq=*/false)))
    return failure();
  auto keyType = cast<RankedTensorType>(key.getType());
  if (failed(verifyAtLeast(op, "clusters", clusters,
                           knobs::kRoutedClusters.attributeMinimum())) ||
      failed(verifyAtMost(op, "clusters", clusters, "key seq",
                          keyType.getDimSize(2))) ||
      failed(verifyAtLeast(op, "window", window,
                           knobs::kRoutedWindow.attributeMinimum())) ||
      failed(verifyAtMost(op, "window", window, "key seq",
                          keyType.getDimSize(2))) ||
      failed(verifyAtLeast(op, "seed", seed, knobs::kSeed.attributeMinimum())))
    return failure();
  if (centroids) {
    ShapeChecker check(op);
    NamedTensor c("centroids", centroids);
    if (failed(check.elementType(c, keyType.getElementType())) ||
        failed(check.shape(
            c, {keyType.getDimSize(1), clusters, keyType.getDimSize(3)})))
      return failure();
  }
  return verifyScale(op, scale);
}

LogicalResult RoutedAttentionOp::verify() {
  return verifyRoutedAttention(*this, getQuery(), getKey(), getValue(),
                               getResult(), getCentroids(), getClusters(),
                               getWindow(), getSeed(), getScale());
}

//===----------------------------------------------------------------------===//
// Model-level ops
//===----------------------------------------------------------------------===//

LogicalResult ParamOp::verify() {
  if (getName().empty())
    return emitOpError("expected a non-empty parameter name");
  auto type = cast<RankedTensorType>(getResult().getType());
  if (!type.hasStaticShape())
    return emitOpError() << "expected parameter '" << getName()
                         << "' to have a static shape, got " << type;
  if (getInitial() && !getState())
    return emitOpError() << "parameter '" << getName()
                         << "' has an initial value but is not state: a "
                            "weight's values come from a weights file";
  if (getInitial() && !std::isfinite(getInitial()->convertToDouble()))
    return emitOpError() << "parameter '" << getName()
                         << "' has a non-finite initial value";
  return success();
}

LogicalResult EmbeddingOp::verify() {
  ShapeChecker check(*this);
  NamedTensor tokens("tokens", getTokens()), table("table", getTable()),
      result("result", getResult());
  if (failed(check.rank(tokens, 2, "[batch, seq]")) ||
      failed(check.rank(table, 2, "[vocab, d_model]")) ||
      failed(check.elementType(result, table.elementType())))
    return failure();
  return check.shape(result, {tokens.dim(0), tokens.dim(1), table.dim(1)});
}

LogicalResult LayerNormOp::verify() {
  ShapeChecker check(*this);
  NamedTensor input("input", getInput()), gamma("gamma", getGamma()),
      beta("beta", getBeta()), result("result", getResult());
  if (failed(check.minRank(input, 1, "[..., features]")))
    return failure();
  int64_t features = input.dim(input.rank() - 1);
  for (const NamedTensor *t : {&gamma, &beta}) {
    if (failed(check.elementType(*t, input.elementType())) ||
        failed(check.shape(*t, {features})))
      return failure();
  }
  if (result.type != input.type)
    return emitOpError() << "expected result type " << input.type << ", got "
                         << result.type;
  return verifyPositive(*this, "epsilon", getEpsilon());
}

LogicalResult LinearOp::verify() {
  ShapeChecker check(*this);
  NamedTensor input("input", getInput()), weight("weight", getWeight()),
      result("result", getResult());
  if (failed(check.minRank(input, 1, "[..., in]")) ||
      failed(check.rank(weight, 2, "[in, out]")) ||
      failed(check.elementType(weight, input.elementType())) ||
      failed(check.elementType(result, input.elementType())))
    return failure();
  int64_t in = input.dim(input.rank() - 1);
  if (failed(check.dim(weight, 0, "rows (input features)", in)))
    return failure();
  if (Value biasValue = getBias()) {
    NamedTensor bias("bias", biasValue);
    if (failed(check.elementType(bias, input.elementType())) ||
        failed(check.shape(bias, {weight.dim(1)})))
      return failure();
  }
  SmallVector<int64_t> expected(input.type.getShape());
  expected.back() = weight.dim(1);
  return check.shape(result, expected);
}

LogicalResult CompressOp::verify() {
  ShapeChecker check(*this);
  NamedTensor input("input", getInput()), weight("weight", getWeight()),
      bias("bias", getBias()), result("result", getResult());
  int64_t rate = getRate();
  if (failed(verifyAtLeast(*this, "rate", rate, 1)) ||
      failed(check.rank(input, 3, "[batch, length, d]")) ||
      failed(check.rank(weight, 3, "[rate, d, d_out]")) ||
      failed(check.elementType(weight, input.elementType())) ||
      failed(check.elementType(bias, input.elementType())) ||
      failed(check.elementType(result, input.elementType())) ||
      failed(check.shape(weight, {rate, input.dim(2), weight.dim(2)})) ||
      failed(check.shape(bias, {weight.dim(2)})))
    return failure();
  int64_t length = input.dim(1);
  if (!ShapedType::isDynamic(length) && length % rate != 0)
    return emitOpError() << "expected the input length " << length
                         << " to be a multiple of 'rate' " << rate;
  int64_t compressed =
      ShapedType::isDynamic(length) ? ShapedType::kDynamic : length / rate;
  return check.shape(result, {input.dim(0), compressed, weight.dim(2)});
}

Value CompressOp::buildAsLinear(OpBuilder &b) {
  Location loc = getLoc();
  auto inputType = cast<RankedTensorType>(getInput().getType());
  auto weightType = cast<RankedTensorType>(getWeight().getType());
  Type elt = inputType.getElementType();
  int64_t batch = inputType.getDimSize(0), length = inputType.getDimSize(1),
          dim = inputType.getDimSize(2), out = weightType.getDimSize(2);
  int64_t rate = getRate(), groups = length / rate;
  // [batch, length, d] -> [batch, groups, rate, d] -> [batch, groups,
  // rate * d]: each group's rows side by side, as the weight's rows are.
  Value grouped = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({batch, groups, rate, dim}, elt),
      getInput(), ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}});
  Value rows = tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get({batch, groups, rate * dim}, elt), grouped,
      ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
  Value weight = tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get({rate * dim, out}, elt), getWeight(),
      ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  return LinearOp::create(b, loc, getResult().getType(), rows, weight,
                          getBias());
}

namespace {
/// The per-head width of a [d_model, heads * head_dim] projection weight.
FailureOr<int64_t> headDim(ShapeChecker &check, Operation *op,
                           const NamedTensor &weight, int64_t dModel,
                           int64_t heads) {
  if (failed(check.rank(weight, 2, "[d_model, heads * head_dim]")) ||
      failed(check.dim(weight, 0, "rows (d_model)", dModel)))
    return failure();
  int64_t cols = weight.dim(1);
  if (ShapedType::isDynamic(cols))
    return ShapedType::kDynamic;
  if (cols % heads != 0)
    return op->emitOpError()
           << "expected " << weight.name << " columns (" << cols
           << ") to be a multiple of 'heads' (" << heads << ")";
  return cols / heads;
}
} // namespace

LogicalResult MultiHeadAttentionOp::verify() {
  ShapeChecker check(*this);
  NamedTensor input("input", getInput()), wq("query weight", getQueryWeight()),
      wv("value weight", getValueWeight()),
      wo("output weight", getOutputWeight()), result("result", getResult());
  if (failed(check.rank(input, 3, kActivationLayout)) ||
      failed(verifyAtLeast(*this, "heads", getHeads(), 1)))
    return failure();
  for (const NamedTensor *t : {&wq, &wv, &wo, &result}) {
    if (failed(check.elementType(*t, input.elementType())))
      return failure();
  }
  int64_t dModel = input.dim(2), heads = getHeads();
  if (failed(headDim(check, *this, wq, dModel, heads)) ||
      failed(headDim(check, *this, wv, dModel, heads)))
    return failure();
  if (Value keyWeight = getKeyWeight()) {
    NamedTensor wk("key weight", keyWeight);
    if (failed(check.elementType(wk, input.elementType())) ||
        failed(check.shape(wk, wq.type.getShape())))
      return failure();
  }
  if (failed(check.rank(wo, 2, "[heads * head_dim, d_model]")) ||
      failed(check.dim(wo, 0, "rows (heads * value head_dim)", wv.dim(1))))
    return failure();
  return check.shape(result, {input.dim(0), input.dim(1), wo.dim(1)});
}

LogicalResult MultiHeadAttentionOp::verifyRegions() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto wq = cast<RankedTensorType>(getQueryWeight().getType());
  auto wv = cast<RankedTensorType>(getValueWeight().getType());
  int64_t heads = getHeads();
  auto perHead = [&](RankedTensorType weight) {
    int64_t cols = weight.getDimSize(1);
    return RankedTensorType::get(
        {input.getDimSize(0), heads, input.getDimSize(1),
         ShapedType::isDynamic(cols) ? cols : cols / heads},
        input.getElementType());
  };
  Type qk = perHead(wq), v = perHead(wv);
  SmallVector<Type> args =
      isSharedQK() ? SmallVector<Type>{qk, v} : SmallVector<Type>{qk, qk, v};
  if (failed(verifyBlockSignature(*this, getBody(), "body", args, {v})))
    return failure();
  // A key projection the body never reads is a weight that silently does
  // nothing (and gets no gradient): say which op ignores the keys.
  BlockArgument keys = getBody().getArgument(1);
  if (isSharedQK() || !keys.use_empty())
    return success();
  InFlightDiagnostic error = emitOpError()
                             << "has a key weight, but its body never "
                                "reads the keys";
  for (Operation *user : getBody().getArgument(0).getUsers())
    if (isa<LSHAttentionOp>(user) ||
        (isa<AttentionOp>(user) && cast<AttentionOp>(user).getSharedQk())) {
      error << ": '" << user->getName() << "' shares queries and keys";
      break;
    }
  return error << "; drop 'key %wk' (the body then takes (query_key, "
                  "value)) or attend to the keys";
}

LogicalResult FeedForwardOp::verify() {
  ShapeChecker check(*this);
  NamedTensor input("input", getInput()), up("up_weight", getUpWeight()),
      upBias("up_bias", getUpBias()), down("down_weight", getDownWeight()),
      downBias("down_bias", getDownBias()), result("result", getResult());
  if (failed(check.rank(input, 3, kActivationLayout)))
    return failure();
  for (const NamedTensor *t : {&up, &upBias, &down, &downBias}) {
    if (failed(check.elementType(*t, input.elementType())))
      return failure();
  }
  int64_t dModel = input.dim(2);
  if (failed(check.rank(up, 2, "[d_model, d_ff]")) ||
      failed(check.dim(up, 0, "rows (d_model)", dModel)))
    return failure();
  int64_t dFF = up.dim(1);
  if (failed(check.shape(upBias, {dFF})) ||
      failed(check.shape(down, {dFF, dModel})) ||
      failed(check.shape(downBias, {dModel})))
    return failure();
  if (result.type != input.type)
    return emitOpError() << "expected result type " << input.type << ", got "
                         << result.type;
  if (failed(verifyAtLeast(*this, "chunks", getChunks(),
                           knobs::kFeedForwardChunks.attributeMinimum())) ||
      failed(verifyAtMost(*this, "chunks", getChunks(), "seq", input.dim(1))))
    return failure();
  return success();
}

LogicalResult ResidualOp::verifyRegions() {
  Type type = getInput().getType();
  return verifyBlockSignature(*this, getBody(), "body", {type}, {type});
}

LogicalResult ReversibleOp::verifyRegions() {
  Type x1 = getX1().getType(), x2 = getX2().getType();
  if (failed(verifyBlockSignature(*this, getF(), "f", {x2}, {x1})))
    return failure();
  return verifyBlockSignature(*this, getG(), "g", {x1}, {x2});
}

LogicalResult SoftmaxCrossEntropyOp::verify() {
  ShapeChecker check(*this);
  NamedTensor logits("logits", getLogits()), labels("labels", getLabels()),
      loss("loss", getLoss());
  if (failed(check.minRank(logits, 2, "[..., vocab]")) ||
      failed(check.shape(labels, logits.type.getShape().drop_back())) ||
      failed(check.elementType(loss, logits.elementType())))
    return failure();
  if (Value weightsValue = getWeights()) {
    NamedTensor weights("weights", weightsValue);
    if (failed(check.elementType(weights, logits.elementType())) ||
        failed(check.shape(weights, labels.type.getShape())))
      return failure();
  }
  return check.shape(loss, {});
}

LogicalResult lcc::attn::detail::verifyMergedPartials(
    Operation *op, Value first, Value firstLogSumExp, Value second,
    Value secondLogSumExp, Value gate, ValueRange alike, ValueRange alikeRows) {
  ShapeChecker check(op);
  NamedTensor o1("first", first), l1("first_logsumexp", firstLogSumExp),
      o2("second", second), l2("second_logsumexp", secondLogSumExp);
  if (failed(check.rank(o1, 4, kAttentionLayout)) ||
      failed(check.shape(o2, o1.type.getShape())) ||
      failed(check.shape(l1, {o1.dim(0), o1.dim(1), o1.dim(2)})) ||
      failed(check.shape(l2, l1.type.getShape())))
    return failure();
  if (gate && failed(check.shape(NamedTensor("gate", gate), {1})))
    return failure();
  for (Value v : alike)
    if (v.getType() != first.getType())
      return op->emitOpError() << "expected " << first.getType()
                               << " like first, got " << v.getType();
  for (Value v : alikeRows)
    if (v.getType() != firstLogSumExp.getType())
      return op->emitOpError() << "expected " << firstLogSumExp.getType()
                               << " like first_logsumexp, got " << v.getType();
  return success();
}

LogicalResult GateSelectOp::verify() {
  ShapeChecker check(*this);
  return check.shape(NamedTensor("gate", getGate()), {1});
}

LogicalResult MergePartialsOp::verify() {
  return detail::verifyMergedPartials(
      *this, getFirst(), getFirstLogsumexp(), getSecond(), getSecondLogsumexp(),
      getGate(), {getResult()}, {getLogsumexp()});
}

#define GET_OP_CLASSES
#include "dialects/Attn/IR/AttnOps.cpp.inc"
