//===- RoutedSteps.h - the steps of routed attention ------------*- C++ -*-===//
//
// The steps of Routing Transformer attention that its forward
// (LowerRoutedAttention.cpp), its backward (LowerRoutedAttentionBackward.cpp)
// and the centroids' update (LowerRoutedCentroidUpdate.cpp) share: the
// routing itself (RoutedRouting.cpp), k-means (RoutedKMeans.cpp), each
// cluster's balanced window of nearest keys (RoutedKeyWindow.cpp) and the
// scores of a tile of sorted queries against one cluster's window.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_LOWERTOLINALG_ROUTEDSTEPS_H
#define LCC_PASSES_LOWERTOLINALG_ROUTEDSTEPS_H

#include "passes/LowerToLinalg/TensorBuilder.h"
#include "passes/LowerToLinalg/TensorOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace lcc::lowering {

/// The sizes of one routed attention over [rows = batch*heads, seq, dim]
/// views.
struct RoutedShape {
  int64_t batch, heads, rows;
  int64_t querySeq, keySeq, dim, valueDim;
  int64_t clusters, window;
  int64_t tile; // sorted queries attended together
  bool causal;
  double scale;
};

/// The shape of a routed attention or of its backward (the same operands
/// and attributes).
template <typename RoutedOp> RoutedShape routedShapeOf(RoutedOp op) {
  mlir::RankedTensorType qType = tensorType(op.getQuery());
  RoutedShape s;
  s.batch = qType.getDimSize(0);
  s.heads = qType.getDimSize(1);
  s.rows = s.batch * s.heads;
  s.querySeq = qType.getDimSize(2);
  s.dim = qType.getDimSize(3);
  s.keySeq = tensorType(op.getKey()).getDimSize(2);
  s.valueDim = tensorType(op.getValue()).getDimSize(3);
  s.clusters = op.getClusters();
  s.window = op.getWindow();
  s.tile = std::min<int64_t>(64, s.querySeq);
  s.causal = op.getCausal();
  s.scale = attentionScale(op.getScale(), op.getQuery());
  return s;
}

/// The cosine of every token of `a` ([rows, m, dim], unit) with every one
/// of `b` ([rows, n, dim], unit), [rows, m, n]: the routing's similarity,
/// the same arithmetic wherever it is taken.
mlir::Value cosines(TensorBuilder &tb, mlir::Value a, mlir::Value b,
                    int64_t rows, int64_t m, int64_t n);

/// Trained centroids `given` ([heads, clusters, dim]) unit-normalised for
/// each of `batch` * heads rows: [rows, clusters, dim].
mlir::Value givenUnitCentroids(TensorBuilder &tb, mlir::Value given,
                               int64_t batch);

/// Where the routing put every token ([rows, ...] each, i32).
struct Routing {
  mlir::Value queryCluster; // [rows, q_seq]: each query's cluster
  mlir::Value windows; // [rows, clusters, window]: key positions, ascending
  mlir::Value sortedQueries; // [rows, q_seq]: the queries in cluster order
  mlir::Value sortedPlace;   // [rows, q_seq]: where each query went
  mlir::Value clusterStarts; // [rows, clusters + 1]: each cluster's first
                             // place (with `withClusterStarts` only)
};

/// Steps 1-4 of routed attention for `query` and `key` ([batch, heads,
/// seq, dim]): the unit centroids (`centroids` [heads, clusters, dim]
/// normalised, or k-means from `seed` when it is null), each query's
/// nearest, each cluster's window of keys and the queries sorted by
/// cluster. The forward and the backward route identically.
Routing routeTokens(mlir::OpBuilder &b, mlir::Location loc,
                    const RoutedShape &s, mlir::Value query, mlir::Value key,
                    mlir::Value centroids, int64_t seed,
                    bool withClusterStarts);

/// Three k-means iterations per row over the unit queries and keys
/// ([rows, seq, dim] each), from `initial` [rows, clusters, dim]: each
/// token joins its nearest centroid; a centroid becomes its members'
/// normalised mean (an empty cluster keeps its centroid).
mlir::Value kMeans(mlir::OpBuilder &b, mlir::Location loc, mlir::Value initial,
                   mlir::Value qUnit, mlir::Value kUnit, const RoutedShape &s);

/// One k-means step over a whole batch, per head: every unit query and key
/// ([batch, heads, seq, dim]) joins its nearest of the unit `centroids`
/// ([heads, clusters, dim]), and each cluster's result is its members'
/// normalised mean, or `stay` ([heads, clusters, dim]) where it has no
/// members or they cancel.
mlir::Value kMeansStepOverBatch(mlir::OpBuilder &b, mlir::Location loc,
                                mlir::Value centroids, mlir::Value stay,
                                mlir::Value qUnit, mlir::Value kUnit,
                                const RoutedShape &s);

/// The positions (ascending) of the `window` largest of `scores` ([n]
/// cosines), ties broken by position: bisection finds the window-th
/// largest value, then one pass collects. Whatever the scores (zeros, NaN,
/// Inf), exactly `window` distinct positions are returned.
mlir::Value selectWindow(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value scores, int64_t n, int64_t window);
/// As above over the first `n` (an index known at run time) of `scores`;
/// fewer than `window` of them fill the first n places, the rest holding
/// position 0.
mlir::Value selectWindow(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value scores, mlir::Value n, int64_t window);

/// The queries of one tile of the sorted order.
struct SortedQueryTile {
  mlir::Value positions; // [tile] i32: original position, -1 past the end
  mlir::Value clusters;  // [tile] i32: cluster, `clusters` past the end
  mlir::Value queries;   // [tile, dim]
};

/// The tile of row `r`'s sorted queries from place `start`; `q` is [rows,
/// q_seq, dim].
SortedQueryTile sortedQueryTile(TensorBuilder &t, const RoutedShape &s,
                                mlir::Value r, mlir::Value start, mlir::Value q,
                                const Routing &routing);

/// The clusters the tile's queries are in, [first, end): sorted, they are
/// a run.
std::pair<mlir::Value, mlir::Value> tileClusters(mlir::OpBuilder &b,
                                                 mlir::Location loc,
                                                 const RoutedShape &s,
                                                 const SortedQueryTile &tile);

/// Rows of `x` ([rows, seq, width]) at the tile's positions, [tile, width]
/// (zeros past the end).
mlir::Value gatherTileRows(TensorBuilder &t, const RoutedShape &s,
                           const SortedQueryTile &tile, mlir::Value r,
                           mlir::Value x, int64_t width);

/// One cluster's window: its key positions ([window] i32) and its keys and
/// values ([window, dim], [window, v_dim]).
struct ClusterWindow {
  mlir::Value positions, keys, values;
};
ClusterWindow gatherClusterWindow(TensorBuilder &t, const RoutedShape &s,
                                  mlir::Value r, mlir::Value c,
                                  const Routing &routing, mlir::Value k,
                                  mlir::Value v);

/// The scaled scores of the tile's queries against cluster `c`'s window,
/// [tile, window]: -inf where the query is in another cluster (or past the
/// end) and, when causal, where the key comes after the query.
mlir::Value clusterScores(TensorBuilder &t, const RoutedShape &s,
                          const SortedQueryTile &tile, mlir::Value c,
                          const ClusterWindow &window);

/// `sorted` ([rows, places, width], in each row's sorted order) back in
/// the original order ([rows, n, width] = `shape`): row i of the result is
/// row place[r, i] of `sorted`.
mlir::Value unsortRows(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::Value sorted, mlir::Value place,
                       llvm::ArrayRef<int64_t> shape);

} // namespace lcc::lowering

#endif // LCC_PASSES_LOWERTOLINALG_ROUTEDSTEPS_H
