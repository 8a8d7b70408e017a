//===- RoutedAttention.cpp - Routing Transformer attention, the reference -===//
//
// attn.routed_attention with given centroids (docs/design.md §3): route
// every query to its nearest unit centroid and give every cluster the
// `window` keys nearest to it, then attend as masked dense attention whose
// mask is that routing. Also the centroids' moving average that training
// applies (attn.routed_centroid_update). See Reference.h.
//
//===----------------------------------------------------------------------===//

#include "Reference.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace lcc::reference {
namespace {

/// The norm floor of the routing, as the compiler's and
/// torch.nn.functional.normalize's.
constexpr double kMinNorm = 1e-12;

/// Row `i` of the [.., n, dim] tensor at `base`, unit-normalised.
std::vector<double> unitRow(const Tensor &t, int64_t base, int64_t dim) {
  std::vector<double> x(t.data.begin() + base, t.data.begin() + base + dim);
  double norm = 0;
  for (double e : x)
    norm += e * e;
  norm = std::max(std::sqrt(norm), kMinNorm);
  for (double &e : x)
    e /= norm;
  return x;
}

double dot(const std::vector<double> &a, const std::vector<double> &b) {
  return std::inner_product(a.begin(), a.end(), b.begin(), 0.0);
}

struct RoutedDims {
  int64_t batch, heads, querySeq, keySeq, dim, clusters;
};

RoutedDims checkRouted(const Tensor &q, const Tensor &k,
                       const Tensor &centroids, const std::string &op) {
  if (q.rank() != 4 || k.rank() != 4)
    throw ReferenceError(op +
                         ": query and key must be [batch, heads, seq, "
                         "head_dim], got " +
                         shapeToString(q.shape) + " and " +
                         shapeToString(k.shape));
  RoutedDims d{q.dim(0), q.dim(1), q.dim(2), k.dim(2), q.dim(3), 0};
  expectShape(k, {d.batch, d.heads, d.keySeq, d.dim}, op + ": key");
  if (centroids.rank() != 3)
    throw ReferenceError(op +
                         ": centroids must be [heads, clusters, "
                         "head_dim], got " +
                         shapeToString(centroids.shape));
  d.clusters = centroids.dim(1);
  expectShape(centroids, {d.heads, d.clusters, d.dim}, op + ": centroids");
  if (d.clusters < 1)
    throw ReferenceError(op + ": expected at least one centroid");
  return d;
}

/// The unit centroids of head h.
std::vector<std::vector<double>> unitCentroids(const Tensor &centroids,
                                               const RoutedDims &d, int64_t h) {
  std::vector<std::vector<double>> units;
  for (int64_t c = 0; c < d.clusters; ++c)
    units.push_back(unitRow(centroids, (h * d.clusters + c) * d.dim, d.dim));
  return units;
}

/// The nearest centroid (largest cosine, the first of equals) of `x`.
int64_t nearest(const std::vector<double> &x,
                const std::vector<std::vector<double>> &centroids) {
  int64_t best = 0;
  for (int64_t c = 1; c < static_cast<int64_t>(centroids.size()); ++c)
    if (dot(x, centroids[c]) > dot(x, centroids[best]))
      best = c;
  return best;
}

} // namespace

Tensor routedAttention(const Tensor &q, const Tensor &k, const Tensor &v,
                       const Tensor &centroids, int64_t window, bool causal,
                       std::optional<double> scale) {
  RoutedDims d = checkRouted(q, k, centroids, "routed_attention");
  if (window < 1 || window > d.keySeq)
    throw ReferenceError("routed_attention: window must be in [1, key seq " +
                         std::to_string(d.keySeq) + "], got " +
                         std::to_string(window));
  // cluster[b][h][i] and inWindow[b][h][c][j]: the routing.
  std::vector<std::vector<std::vector<int64_t>>> cluster(
      d.batch, std::vector<std::vector<int64_t>>(d.heads));
  std::vector<std::vector<std::vector<std::vector<bool>>>> inWindow(
      d.batch, std::vector<std::vector<std::vector<bool>>>(d.heads));
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t h = 0; h < d.heads; ++h) {
      auto units = unitCentroids(centroids, d, h);
      for (int64_t i = 0; i < d.querySeq; ++i)
        cluster[b][h].push_back(nearest(
            unitRow(q, ((b * d.heads + h) * d.querySeq + i) * d.dim, d.dim),
            units));
      std::vector<std::vector<double>> keys;
      for (int64_t j = 0; j < d.keySeq; ++j)
        keys.push_back(
            unitRow(k, ((b * d.heads + h) * d.keySeq + j) * d.dim, d.dim));
      for (int64_t c = 0; c < d.clusters; ++c) {
        // The `window` largest cosines, ties to the earlier position.
        std::vector<int64_t> order(d.keySeq);
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t e) {
          return dot(keys[a], units[c]) > dot(keys[e], units[c]);
        });
        std::vector<bool> chosen(d.keySeq, false);
        for (int64_t w = 0; w < window; ++w)
          chosen[order[w]] = true;
        inWindow[b][h].push_back(chosen);
      }
    }
  }
  PositionMask routing = [&](int64_t b, int64_t h, int64_t i, int64_t j) {
    return static_cast<bool>(inWindow[b][h][cluster[b][h][i]][j]);
  };
  return modifiedAttention(q, k, v, causal, scale, routing, ScoreModifier());
}

Tensor routedCentroidUpdate(const Tensor &centroids, const Tensor &q,
                            const Tensor &k, double decay) {
  RoutedDims d = checkRouted(q, k, centroids, "routed_centroid_update");
  Tensor out = centroids;
  for (int64_t h = 0; h < d.heads; ++h) {
    auto units = unitCentroids(centroids, d, h);
    std::vector<std::vector<double>> sums(d.clusters,
                                          std::vector<double>(d.dim, 0.0));
    std::vector<int64_t> members(d.clusters, 0);
    for (int64_t b = 0; b < d.batch; ++b)
      for (auto [tokens, seq] :
           {std::make_pair(&q, d.querySeq), std::make_pair(&k, d.keySeq)})
        for (int64_t i = 0; i < seq; ++i) {
          auto x =
              unitRow(*tokens, ((b * d.heads + h) * seq + i) * d.dim, d.dim);
          int64_t c = nearest(x, units);
          ++members[c];
          for (int64_t e = 0; e < d.dim; ++e)
            sums[c][e] += x[e];
        }
    for (int64_t c = 0; c < d.clusters; ++c) {
      double norm = std::sqrt(dot(sums[c], sums[c]));
      bool stays = members[c] == 0 || norm <= 1e-12;
      for (int64_t e = 0; e < d.dim; ++e) {
        double &value = out.at({h, c, e});
        double target = stays ? value : sums[c][e] / norm;
        value = decay * value + (1.0 - decay) * target;
      }
    }
  }
  return out;
}

} // namespace lcc::reference
