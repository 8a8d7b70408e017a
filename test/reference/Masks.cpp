//===- Masks.cpp - the named masks and scores of the examples -------------===//

#include "Masks.h"
#include "Expressions.h"
#include "ToolSupport.h"

#include <cmath>
#include <cstdlib>

namespace lcc::reference {

namespace {

/// `spec` split at its first ':' into a name and its comma-separated
/// integer parameters, `count` of them (or at least one when count < 0).
std::pair<std::string, std::vector<int64_t>>
parseSpec(const std::string &spec) {
  size_t colon = spec.find(':');
  std::string name = spec.substr(0, colon);
  std::vector<int64_t> values;
  if (colon != std::string::npos)
    for (const std::string &part : splitCommas(spec.substr(colon + 1)))
      values.push_back(parseInt64(part, "--mask/--score parameter"));
  return {name, values};
}

void expectParameters(const std::string &spec, size_t got, size_t want) {
  if (got != want)
    throw ReferenceError("'" + spec + "' needs " + std::to_string(want) +
                         " parameter(s), got " + std::to_string(got));
}

} // namespace

PositionMask namedMask(const std::string &spec) {
  if (spec.rfind("expr:", 0) == 0)
    return expressionMask(spec.substr(5));
  auto [name, p] = parseSpec(spec);
  for (int64_t v : p)
    if (v < 0)
      throw ReferenceError("'" + spec + "': parameters must be >= 0");
  if (name == "sliding") {
    expectParameters(spec, p.size(), 1);
    int64_t w = p[0];
    return [=](int64_t, int64_t, int64_t i, int64_t j) {
      return std::llabs(i - j) < w;
    };
  }
  if (name == "longformer") {
    expectParameters(spec, p.size(), 2);
    int64_t w = p[0], g = p[1];
    return [=](int64_t, int64_t, int64_t i, int64_t j) {
      return std::llabs(i - j) < w || i < g || j < g;
    };
  }
  if (name == "bigbird") {
    expectParameters(spec, p.size(), 4);
    int64_t block = p[0], g = p[1], r = p[2], seed = p[3];
    if (block < 1)
      throw ReferenceError("'" + spec + "': the block must be >= 1");
    return [=](int64_t, int64_t, int64_t i, int64_t j) {
      int64_t qb = i / block, kb = j / block;
      return std::llabs(qb - kb) <= 1 || qb < g || kb < g ||
             (qb * 31 + kb * 17 + seed) % 101 < r;
    };
  }
  if (name == "documents") {
    if (p.empty())
      throw ReferenceError("'" + spec + "' needs document lengths");
    std::vector<int64_t> ends;
    int64_t end = 0;
    for (int64_t length : p)
      ends.push_back(end += length);
    auto document = [ends](int64_t position) {
      size_t d = 0;
      while (d < ends.size() && position >= ends[d])
        ++d;
      return d; // past the last document: a document of its own
    };
    return [=](int64_t, int64_t, int64_t i, int64_t j) {
      return document(i) == document(j);
    };
  }
  if (name == "local") {
    expectParameters(spec, p.size(), 3);
    int64_t w = p[0], back = p[1], ahead = p[2];
    if (w < 1)
      throw ReferenceError("'" + spec + "': the window must be >= 1");
    return [=](int64_t, int64_t, int64_t i, int64_t j) {
      int64_t qw = i / w, kw = j / w;
      return qw - back <= kw && kw <= qw + ahead;
    };
  }
  if (name == "lag") {
    expectParameters(spec, p.size(), 1);
    int64_t lag = p[0];
    return [=](int64_t, int64_t, int64_t i, int64_t j) { return j + lag <= i; };
  }
  throw ReferenceError("unknown mask '" + spec +
                       "'; expected sliding, longformer, bigbird, documents, "
                       "local or lag");
}

ScoreModifier namedScore(const std::string &spec, int64_t heads) {
  if (spec.rfind("expr:", 0) == 0)
    return expressionScore(spec.substr(5));
  auto [name, p] = parseSpec(spec);
  if (name == "alibi") {
    expectParameters(spec, p.size(), 0);
    return [=](double s, int64_t, int64_t h, int64_t i, int64_t j) {
      double slope = std::pow(2.0, -8.0 * double(h + 1) / double(heads));
      return s + slope * double(j - i);
    };
  }
  if (name == "softcap") {
    expectParameters(spec, p.size(), 1);
    if (p[0] < 1)
      throw ReferenceError("'" + spec + "': the cap must be >= 1");
    double cap = double(p[0]);
    return [=](double s, int64_t, int64_t, int64_t, int64_t) {
      return cap * std::tanh(s / cap);
    };
  }
  throw ReferenceError("unknown score '" + spec +
                       "'; expected alibi or softcap:C");
}

} // namespace lcc::reference
