//===- TokenSampler.cpp - the next token from a row of logits -------------===//

#include "TokenSampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

using namespace lcc::tools;

double TokenSampler::uniform() {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return double(z >> 11) * 0x1.0p-53;
}

int32_t TokenSampler::next(const float *logits, int64_t vocab) {
  if (!options.sample || options.temperature == 0)
    return int32_t(std::max_element(logits, logits + vocab) - logits);
  // The candidates, most likely first (ties to the lower id).
  std::vector<int32_t> order(vocab);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  if (options.topK > 0 && int64_t(options.topK) < vocab)
    order.resize(options.topK);
  double top = logits[order.front()];
  std::vector<double> weights;
  double total = 0;
  for (int32_t token : order) {
    double w = std::exp((double(logits[token]) - top) / options.temperature);
    weights.push_back(w);
    total += w;
  }
  if (options.topP < 1) {
    // The smallest prefix whose probability reaches top-p.
    double kept = 0;
    size_t count = 0;
    while (count < weights.size() && kept < options.topP * total)
      kept += weights[count++];
    weights.resize(std::max<size_t>(count, 1));
    total = std::accumulate(weights.begin(), weights.end(), 0.0);
  }
  double target = uniform() * total;
  for (size_t i = 0; i < weights.size(); ++i) {
    target -= weights[i];
    if (target < 0)
      return order[i];
  }
  return order[weights.size() - 1];
}
