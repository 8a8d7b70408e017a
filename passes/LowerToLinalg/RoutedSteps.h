//===- RoutedSteps.h - the steps of routed attention ------------*- C++ -*-===//
//
// The two steps of Routing Transformer attention that are algorithms of
// their own: k-means over the unit queries and keys (RoutedKMeans.cpp) and
// each cluster's balanced window of nearest keys (RoutedKeyWindow.cpp).
// LowerRoutedAttention.cpp composes them.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_LOWERTOLINALG_ROUTEDSTEPS_H
#define LCC_PASSES_LOWERTOLINALG_ROUTEDSTEPS_H

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

/// Three k-means iterations per row over the unit queries and keys
/// ([rows, seq, dim] each), from `initial` [rows, clusters, dim]: each
/// token joins its nearest centroid; a centroid becomes its members'
/// normalised mean (an empty cluster keeps its centroid).
mlir::Value kMeans(mlir::OpBuilder &b, mlir::Location loc, mlir::Value initial,
                   mlir::Value qUnit, mlir::Value kUnit, const RoutedShape &s);

/// The positions (ascending) of the `window` largest of `scores` ([n]
/// cosines), ties broken by position: bisection finds the window-th
/// largest value, then one pass collects. Whatever the scores (zeros, NaN,
/// Inf), exactly `window` distinct positions are returned.
mlir::Value selectWindow(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value scores, int64_t n, int64_t window);

} // namespace lcc::lowering

#endif // LCC_PASSES_LOWERTOLINALG_ROUTEDSTEPS_H
