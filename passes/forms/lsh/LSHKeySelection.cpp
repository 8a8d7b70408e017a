//===- LSHKeySelection.cpp - the keys LSH attention scores, for one input -===//
//
// What `lcc --emit=attention-map --input` draws of attn.lsh_attention: the
// op's own hashing and sorting (hashAndSort, as its lowering builds them),
// then, from their contents, the keys each query's chunk reads: its own
// chunk of the sorted order and the chunk before it, the rounds' orders
// laid end to end.
//
//===----------------------------------------------------------------------===//

#include "passes/LowerToLinalg/TensorOps.h"
#include "passes/forms/lsh/LSHForm.h"
#include "passes/forms/lsh/LSHSteps.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::lowering;

namespace {

/// The keys of row 0 from its sorted orders (`positions`, [rounds,
/// padded]) and buckets (`buckets`, [rounds, padded], by position).
KeySelection selectLSHKeys(const LSHShape &s, const int32_t *positions,
                           const int32_t *buckets) {
  KeySelection selection;
  selection.queries = selection.keys = s.seq;
  selection.computedScores = double(s.rounds) * s.padded * 2 * s.bucket;
  selection.groupName = "bucket in round 1";
  selection.groupCount = s.buckets;
  selection.queryGroups.assign(buckets, buckets + s.seq);
  selection.keyGroups = selection.queryGroups;
  selection.description =
      llvm::formatv("{0} round{1}, {2} buckets, chunks of {3}", s.rounds,
                    s.rounds == 1 ? "" : "s", s.buckets, s.bucket)
          .str();
  std::vector<std::vector<int32_t>> keysOf(s.seq);
  int64_t total = s.rounds * s.chunks;
  for (int64_t global = 0; global < total; ++global) {
    // A chunk reads the keys of the chunk before it and its own.
    int64_t before = (global + total - 1) % total;
    const int32_t *own = positions + global * s.bucket;
    const int32_t *previous = positions + before * s.bucket;
    for (int64_t i = 0; i < s.bucket; ++i) {
      int32_t query = own[i];
      if (query < 0 || query >= s.seq)
        continue; // padding
      for (const int32_t *chunk : {previous, own})
        for (int64_t j = 0; j < s.bucket; ++j) {
          int32_t key = chunk[j];
          if (key >= 0 && key < s.seq && key != query &&
              !(s.causal && key > query))
            keysOf[query].push_back(key);
        }
    }
  }
  for (std::vector<int32_t> &keys : keysOf)
    selection.addQuery(std::move(keys));
  return selection;
}

} // namespace

FailureOr<KeySelectionProbe>
lcc::buildLSHKeySelectionProbe(OpBuilder &b, Operation *op,
                               std::string &whyNot) {
  auto lsh = cast<attn::LSHAttentionOp>(op);
  if (!hasStaticShapes(lsh)) {
    whyNot = "dynamic shapes";
    return failure();
  }
  LSHShape s =
      LSHShape::of(lsh.getQueryKey(), lsh.getValue(), lsh.getNHashes(),
                   lsh.getBucketSize(), lsh.getCausal(), lsh.getScale(),
                   lsh.getFactorizedHash(), lsh.getNBuckets());
  LSHSorting sorting =
      hashAndSort(b, lsh.getLoc(), s, lsh.getQueryKey(), lsh.getValue(),
                  static_cast<uint64_t>(lsh.getSeed()));
  KeySelectionProbe probe;
  probe.values = {sorting.sorted.positions, sorting.buckets};
  probe.read = [s](ArrayRef<const int32_t *> contents) {
    return selectLSHKeys(s, contents[0], contents[1]);
  };
  return probe;
}
