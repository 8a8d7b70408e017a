//===- RoutedAttentionTest.cpp - Hand-computed checks of routed attention -===//

#include "TestUtil.h"

using namespace lcc::reference;

namespace {

// One head, head_dim 2, four tokens on the axes: q = k = (1,0), (0,1),
// (-1,0), (0,-1) scaled by 2, 3, 4, 5 (unit directions are what routes).
Tensor axisTokens() { return Tensor({1, 1, 4, 2}, {2, 0, 0, 3, -4, 0, 0, -5}); }

TEST(RoutedAttention, OneClusterWithEveryKeyIsDenseAttention) {
  Tensor x = axisTokens();
  Tensor v({1, 1, 4, 1}, {1, 2, 3, 4});
  Tensor c({1, 1, 2}, {0.3, -0.7});
  for (bool causal : {false, true}) {
    Tensor routed = routedAttention(x, x, v, c, 4, causal);
    Tensor dense = attention(x, x, v, causal);
    for (int64_t i = 0; i < 4; ++i)
      EXPECT_NEAR(routed.data[i], dense.data[i], 1e-15) << "causal " << causal;
  }
}

TEST(RoutedAttention, EachQueryAttendsToItsClustersWindow) {
  // Centroids (1,0) and (-1,0); windows of 1: cluster 0 takes key 0,
  // cluster 1 key 2. Tokens 0 and 1 route to cluster 0 (token 1 is a tie,
  // to the first), tokens 2 and 3 to cluster 1 (token 3 ties too: first
  // is cluster 0). So the outputs are v0, v0, v2, v0.
  Tensor x = axisTokens();
  Tensor v({1, 1, 4, 1}, {1, 2, 3, 4});
  Tensor c({1, 2, 2}, {5, 0, -1, 0});
  Tensor out = routedAttention(x, x, v, c, 1, false);
  EXPECT_EQ(out.data, (std::vector<double>{1, 1, 3, 1}));
  // Causal: query 0 sees key 0; query 1 key 0; query 2 key 2; query 3 key 0.
  EXPECT_EQ(routedAttention(x, x, v, c, 1, true).data,
            (std::vector<double>{1, 1, 3, 1}));
}

TEST(RoutedAttention, CentroidsMoveTowardTheirMembers) {
  // Cluster 0 (1,0) gets the tokens at (1,0), (0,1), (0,-1) of q and of k
  // (ties to the first): their unit sum is 2 * (1, 0), direction (1, 0);
  // cluster 1 (-1,0) gets (-1,0) twice. With decay 0.5 the centroids (2,0)
  // and (-3,0) move halfway to (1,0) and (-1,0).
  Tensor x = axisTokens();
  Tensor c({1, 2, 2}, {2, 0, -3, 0});
  Tensor moved = routedCentroidUpdate(c, x, x, 0.5);
  EXPECT_EQ(moved.data, (std::vector<double>{0.5 * 2 + 0.5, 0, -1.5 - 0.5, 0}));
  // A centroid without members stays where it is.
  Tensor far({1, 3, 2}, {1, 0, -1, 0, 0.0, 0.0});
  Tensor kept = routedCentroidUpdate(far, x, x, 0.5);
  EXPECT_EQ(kept.data[4], 0.0);
  EXPECT_EQ(kept.data[5], 0.0);
}

TEST(RoutedAttention, RejectsAWindowOutsideTheKeys) {
  Tensor x = axisTokens();
  Tensor v({1, 1, 4, 1}, {1, 2, 3, 4});
  Tensor c({1, 1, 2}, {1, 0});
  EXPECT_THROW(routedAttention(x, x, v, c, 5, false), ReferenceError);
  EXPECT_THROW(routedAttention(x, x, v, c, 0, false), ReferenceError);
  EXPECT_THROW(routedCentroidUpdate(Tensor({2, 1, 2}), x, x, 0.5),
               ReferenceError);
}

} // namespace
