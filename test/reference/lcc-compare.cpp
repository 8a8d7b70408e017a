//===- lcc-compare.cpp - Normwise comparison of two .npy files ------------===//
//
//   lcc-compare A.npy B.npy [--rtol=1e-5] [--metric=max|l2]
//
// B is the reference. Prints
//   max_abs_err: max |a - b|
//   max_abs_ref: max |b|
//   rel_err:     max_abs_err / max_abs_ref   (normwise, infinity norm)
//   l2_rel_err:  ||a - b||_2 / ||b||_2
//   --metric=l2 compares l2_rel_err with rtol instead of rel_err (for
//   approximations such as LSH, judged on the whole output).
//   non_finite:  how many positions hold a NaN or infinity (only if any)
//   worst_index: the multi-index of max_abs_err, or of the first non-finite
//   PASS/FAIL:   the verdict
// Exit status: 0 iff rel_err <= rtol; 1 if not (any NaN or infinity makes
// rel_err nan and fails; any error against an all-zero reference makes it
// inf); 2 on a usage or file error ("lcc-compare: error: ...").
//
//===----------------------------------------------------------------------===//

#include "Reference.h"
#include "TensorIO.h"
#include "ToolSupport.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>

using namespace lcc::reference;

namespace {

const char *const kUsage =
    "usage: lcc-compare ACTUAL.npy REFERENCE.npy [--rtol=1e-5] "
    "[--metric=max|l2] [--rows=BEGIN:END]\n"
    "exits 0 iff max|a-b| / max|b| (or, with --metric=l2, "
    "||a-b|| / ||b||) <= rtol\n"
    "--rows compares only rows [BEGIN, END) of the second-last dimension\n"
    "(the tokens of [batch, heads, seq, head_dim]; a prefix of a sequence)\n";

/// Keeps rows [begin, end) of the second-last dimension of `t`.
Tensor selectRows(const Tensor &t, int64_t begin, int64_t end,
                  const std::string &what) {
  if (t.rank() < 2 || begin < 0 || begin >= end || end > t.dim(-2))
    throw ReferenceError("--rows " + std::to_string(begin) + ":" +
                         std::to_string(end) + " is not inside the " +
                         std::to_string(t.rank() < 2 ? 0 : t.dim(-2)) +
                         " rows of " + what);
  Shape shape = t.shape;
  shape[shape.size() - 2] = end - begin;
  Tensor out(shape);
  int64_t rows = t.dim(-2), width = t.dim(-1), kept = 0;
  for (int64_t outer = 0; outer < t.size() / (rows * width); ++outer)
    for (int64_t r = begin; r < end; ++r)
      for (int64_t c = 0; c < width; ++c)
        out.data[kept++] = t.data[(outer * rows + r) * width + c];
  return out;
}

/// Multi-index of flat offset `flat` in `shape`.
Shape unflatten(int64_t flat, const Shape &shape) {
  Shape index(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    index[i] = flat % shape[i];
    flat /= shape[i];
  }
  return index;
}

int run(int argc, char **argv) {
  Arguments args =
      parseArguments(argc, argv,
                     {{"help", false},
                      {"rtol", true},
                      {"metric", true},
                      {"rows", true}});
  if (args.has("help")) {
    std::cout << kUsage;
    return 0;
  }
  if (args.positionals.size() != 2)
    throw ReferenceError("expected two files (ACTUAL.npy REFERENCE.npy), got " +
                         std::to_string(args.positionals.size()));
  double rtol =
      args.has("rtol") ? parseDouble(args.value("rtol"), "--rtol") : 1e-5;
  if (!(rtol >= 0))
    throw ReferenceError("--rtol must be >= 0");
  std::string metric = args.has("metric") ? args.value("metric") : "max";
  if (metric != "max" && metric != "l2")
    throw ReferenceError("--metric must be 'max' or 'l2', got '" + metric +
                         "'");

  const std::string &pathA = args.positionals[0], &pathB = args.positionals[1];
  Tensor a = readNpy(pathA);
  Tensor b = readNpy(pathB);
  if (a.shape != b.shape)
    throw ReferenceError("shape mismatch: " + pathA + " is " +
                         shapeToString(a.shape) + " but " + pathB + " is " +
                         shapeToString(b.shape));
  if (args.has("rows")) {
    std::string text = args.value("rows");
    size_t colon = text.find(':');
    if (colon == std::string::npos)
      throw ReferenceError("--rows needs BEGIN:END, got '" + text + "'");
    int64_t begin = parseInt64(text.substr(0, colon), "--rows BEGIN");
    int64_t end = parseInt64(text.substr(colon + 1), "--rows END");
    a = selectRows(a, begin, end, pathA);
    b = selectRows(b, begin, end, pathB);
  }

  // A NaN or infinity anywhere makes the norms meaningless: it fails, and
  // worst_index points at the first one.
  int64_t nonFinite = 0, worst = -1;
  double maxAbsErr = 0, maxAbsRef = 0, sumSqErr = 0, sumSqRef = 0;
  for (int64_t i = 0; i < a.size(); ++i) {
    double x = a.data[i], y = b.data[i];
    if (!std::isfinite(x) || !std::isfinite(y)) {
      if (nonFinite++ == 0)
        worst = i;
      continue;
    }
    double err = std::fabs(x - y);
    if (err > maxAbsErr && nonFinite == 0) {
      maxAbsErr = err;
      worst = i;
    }
    maxAbsRef = std::max(maxAbsRef, std::fabs(y));
    sumSqErr += (x - y) * (x - y);
    sumSqRef += y * y;
  }
  double relErr;
  if (nonFinite > 0)
    maxAbsErr = relErr = std::numeric_limits<double>::quiet_NaN();
  else if (maxAbsErr == 0)
    relErr = 0;
  else if (maxAbsRef == 0)
    relErr = std::numeric_limits<double>::infinity();
  else
    relErr = maxAbsErr / maxAbsRef;

  double l2RelErr = nonFinite > 0 ? std::numeric_limits<double>::quiet_NaN()
                   : sumSqErr == 0 ? 0
                   : sumSqRef == 0 ? std::numeric_limits<double>::infinity()
                                   : std::sqrt(sumSqErr / sumSqRef);
  double judged = metric == "l2" ? l2RelErr : relErr;
  bool pass = judged <= rtol; // false for NaN
  std::printf("max_abs_err: %.6e\n", maxAbsErr);
  std::printf("max_abs_ref: %.6e\n", maxAbsRef);
  std::printf("rel_err: %.6e\n", relErr);
  std::printf("l2_rel_err: %.6e\n", l2RelErr);
  if (nonFinite > 0)
    std::printf("non_finite: %lld\n", static_cast<long long>(nonFinite));
  if (worst >= 0)
    std::printf("worst_index: %s\n",
                shapeToString(unflatten(worst, a.shape)).c_str());
  std::printf("%s: %s %s rtol %.3e\n", pass ? "PASS" : "FAIL",
              metric == "l2" ? "l2_rel_err" : "rel_err",
              pass ? "<=" : "exceeds", rtol);
  return pass ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "lcc-compare: error: %s\n", e.what());
    return 2;
  }
}
