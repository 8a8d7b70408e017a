//===- RoutedKeySelection.cpp - the keys routed attention scores ----------===//
//
// What `lcc --emit=attention-map --input` draws of attn.routed_attention:
// the op's own routing (routeTokens, as its lowering builds it), then, from
// its contents, the keys each query scores: the window of its cluster.
//
//===----------------------------------------------------------------------===//

#include "passes/forms/routed/RoutedForm.h"
#include "passes/forms/routed/RoutedSteps.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::lowering;

namespace {

/// The keys of row 0 from each query's cluster (`queryCluster`, [q_seq])
/// and each cluster's window (`windows`, [clusters, window]).
KeySelection selectRoutedKeys(const RoutedShape &s, const int32_t *queryCluster,
                              const int32_t *windows) {
  KeySelection selection;
  selection.queries = s.querySeq;
  selection.keys = s.keySeq;
  selection.computedScores = double(s.querySeq) * s.window;
  selection.groupName = "cluster";
  selection.groupCount = s.clusters;
  selection.queryGroups.assign(queryCluster, queryCluster + s.querySeq);
  selection.description =
      llvm::formatv("{0} clusters, windows of {1} keys", s.clusters, s.window)
          .str();
  for (int64_t query = 0; query < s.querySeq; ++query) {
    std::vector<int32_t> keys;
    int32_t cluster = queryCluster[query];
    if (cluster >= 0 && cluster < s.clusters)
      for (int64_t j = 0; j < s.window; ++j) {
        int32_t key = windows[cluster * s.window + j];
        if (key >= 0 && key < s.keySeq && !(s.causal && key > query))
          keys.push_back(key);
      }
    selection.addQuery(std::move(keys));
  }
  return selection;
}

} // namespace

FailureOr<KeySelectionProbe>
lcc::buildRoutedKeySelectionProbe(OpBuilder &b, Operation *op,
                                  std::string &whyNot) {
  auto routed = cast<attn::RoutedAttentionOp>(op);
  if (!hasStaticShapes(routed)) {
    whyNot = "dynamic shapes";
    return failure();
  }
  RoutedShape s = routedShapeOf(routed);
  Routing routing =
      routeTokens(b, routed.getLoc(), s, routed.getQuery(), routed.getKey(),
                  routed.getCentroids(), routed.getSeed(),
                  /*withClusterStarts=*/false);
  KeySelectionProbe probe;
  probe.values = {routing.queryCluster, routing.windows};
  probe.read = [s](ArrayRef<const int32_t *> contents) {
    return selectRoutedKeys(s, contents[0], contents[1]);
  };
  return probe;
}
