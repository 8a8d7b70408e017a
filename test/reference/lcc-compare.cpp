//===- lcc-compare.cpp - Normwise comparison of two .npy files ------------===//
//
//   lcc-compare A.npy B.npy [--rtol=1e-5] [--metric=max|l2]
//   lcc-compare A.safetensors B.safetensors [--rtol=1e-5] [--metric=max|l2]
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
// Two .safetensors files must hold the same names and shapes; each tensor
// is compared as above and printed as "NAME: rel_err E" (or l2_rel_err),
// then "max rel_err E" and the verdict on the worst (two gradient files of
// one model, for instance).
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
#include <map>

using namespace lcc::reference;

namespace {

const char *const kUsage =
    "usage: lcc-compare ACTUAL.npy REFERENCE.npy [--rtol=1e-5] "
    "[--metric=max|l2] [--rows=BEGIN:END]\n"
    "       lcc-compare ACTUAL.safetensors REFERENCE.safetensors [--rtol=1e-5] "
    "[--metric=max|l2]\n"
    "exits 0 iff max|a-b| / max|b| (or, with --metric=l2, "
    "||a-b|| / ||b||) <= rtol\n"
    "--rows compares only rows [BEGIN, END) of the second-last dimension\n"
    "(the tokens of [batch, heads, seq, head_dim]; a prefix of a sequence)\n"
    "with .safetensors, every tensor of one name is compared, the worst "
    "judged\n";

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

struct Comparison {
  double maxAbsErr = 0, maxAbsRef = 0, relErr = 0, l2RelErr = 0;
  int64_t nonFinite = 0, worst = -1;
};

/// The normwise errors of `a` against the reference `b` (same shape).
Comparison compare(const Tensor &a, const Tensor &b) {
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

  double l2RelErr = nonFinite > 0   ? std::numeric_limits<double>::quiet_NaN()
                    : sumSqErr == 0 ? 0
                    : sumSqRef == 0 ? std::numeric_limits<double>::infinity()
                                    : std::sqrt(sumSqErr / sumSqRef);
  Comparison c;
  c.maxAbsErr = maxAbsErr;
  c.maxAbsRef = maxAbsRef;
  c.relErr = relErr;
  c.l2RelErr = l2RelErr;
  c.nonFinite = nonFinite;
  c.worst = worst;
  return c;
}

bool endsWith(const std::string &text, const std::string &suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Every tensor of two .safetensors files, by name.
int compareSafetensors(const std::string &pathA, const std::string &pathB,
                       double rtol, bool l2) {
  std::map<std::string, Tensor> a = readSafetensors(pathA);
  std::map<std::string, Tensor> b = readSafetensors(pathB);
  for (const auto &[name, tensor] : b)
    if (!a.count(name))
      throw ReferenceError(pathA + " has no tensor '" + name + "' (" + pathB +
                           " has)");
  for (const auto &[name, tensor] : a) {
    auto it = b.find(name);
    if (it == b.end())
      throw ReferenceError(pathB + " has no tensor '" + name + "' (" + pathA +
                           " has)");
    if (tensor.shape != it->second.shape)
      throw ReferenceError("shape mismatch: '" + name + "' is " +
                           shapeToString(tensor.shape) + " in " + pathA +
                           " but " + shapeToString(it->second.shape) + " in " +
                           pathB);
  }
  const char *metric = l2 ? "l2_rel_err" : "rel_err";
  double worst = 0;
  for (const auto &[name, tensor] : a) {
    Comparison c = compare(tensor, b.at(name));
    double judged = l2 ? c.l2RelErr : c.relErr;
    std::printf("%s: %s %.6e\n", name.c_str(), metric, judged);
    worst = std::isnan(judged) || std::isnan(worst) ? std::nan("")
                                                    : std::max(worst, judged);
  }
  bool pass = worst <= rtol; // false for NaN
  std::printf("max %s %.6e\n", metric, worst);
  std::printf("%s: max %s %s rtol %.3e\n", pass ? "PASS" : "FAIL", metric,
              pass ? "<=" : "exceeds", rtol);
  return pass ? 0 : 1;
}

int run(int argc, char **argv) {
  Arguments args = parseArguments(
      argc, argv,
      {{"help", false}, {"rtol", true}, {"metric", true}, {"rows", true}});
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
  if (endsWith(pathA, ".safetensors") || endsWith(pathB, ".safetensors")) {
    if (!endsWith(pathA, ".safetensors") || !endsWith(pathB, ".safetensors"))
      throw ReferenceError("expected two .safetensors files or two .npy "
                           "files, got " +
                           pathA + " and " + pathB);
    if (args.has("rows"))
      throw ReferenceError("--rows applies to .npy files only");
    return compareSafetensors(pathA, pathB, rtol, metric == "l2");
  }
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

  Comparison c = compare(a, b);
  double judged = metric == "l2" ? c.l2RelErr : c.relErr;
  bool pass = judged <= rtol; // false for NaN
  std::printf("max_abs_err: %.6e\n", c.maxAbsErr);
  std::printf("max_abs_ref: %.6e\n", c.maxAbsRef);
  std::printf("rel_err: %.6e\n", c.relErr);
  std::printf("l2_rel_err: %.6e\n", c.l2RelErr);
  if (c.nonFinite > 0)
    std::printf("non_finite: %lld\n", static_cast<long long>(c.nonFinite));
  if (c.worst >= 0)
    std::printf("worst_index: %s\n",
                shapeToString(unflatten(c.worst, a.shape)).c_str());
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
