//===- TestUtil.h - Helpers for the reference's own unit tests ------------===//

#ifndef LCC_TEST_REFERENCE_TESTUTIL_H
#define LCC_TEST_REFERENCE_TESTUTIL_H

#include "Random.h"
#include "Reference.h"

#include <gtest/gtest.h>

#include <cmath>

namespace lcc::reference {

/// N(0, 1) entries, scaled.
inline Tensor randomTensor(const Shape &shape, SplitMix64 &rng,
                           double scale = 1.0) {
  Tensor t(shape);
  for (double &x : t.data)
    x = scale * rng.normal();
  return t;
}

/// Same shape and every element within `tolerance`.
inline void expectTensorNear(const Tensor &actual, const Tensor &expected,
                             double tolerance) {
  ASSERT_EQ(shapeToString(actual.shape), shapeToString(expected.shape));
  for (int64_t i = 0; i < actual.size(); ++i)
    ASSERT_NEAR(actual.data[i], expected.data[i], tolerance)
        << "at flat index " << i;
}

inline bool allFinite(const Tensor &t) {
  for (double x : t.data)
    if (!std::isfinite(x))
      return false;
  return true;
}

/// The message of the ReferenceError that `f` throws ("" if none).
template <typename F> std::string errorOf(F &&f) {
  try {
    f();
  } catch (const ReferenceError &e) {
    return e.what();
  }
  return "";
}

} // namespace lcc::reference

#endif // LCC_TEST_REFERENCE_TESTUTIL_H
