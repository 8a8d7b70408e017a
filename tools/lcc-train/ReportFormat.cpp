//===- ReportFormat.cpp - how lcc-train writes numbers
//---------------------===//

#include "ReportFormat.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace lcc::train {

/// "0:42", "12:05", "3:02:09".
std::string formatDuration(double seconds) {
  uint64_t total = seconds > 0 ? uint64_t(seconds + 0.5) : 0;
  char text[48];
  if (total >= 3600)
    std::snprintf(text, sizeof(text), "%llu:%02llu:%02llu",
                  (unsigned long long)(total / 3600),
                  (unsigned long long)(total / 60 % 60),
                  (unsigned long long)(total % 60));
  else
    std::snprintf(text, sizeof(text), "%llu:%02llu",
                  (unsigned long long)(total / 60),
                  (unsigned long long)(total % 60));
  return text;
}

/// The shortest decimal text that reads back as `value`, as a float when
/// `single` (a loss the device computed in f32), else as a double; JSON
/// null when it is not finite.
std::string jsonNumber(double value, bool single) {
  if (!std::isfinite(value))
    return "null";
  char text[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(text, sizeof(text), "%.*g", precision, value);
    if (single ? std::strtof(text, nullptr) == float(value)
               : std::strtod(text, nullptr) == value)
      break;
  }
  return text;
}

std::string jsonList(const std::vector<double> &values, bool single) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i)
    out += (i ? ", " : "") + jsonNumber(values[i], single);
  return out + "]";
}

double median(std::vector<double> values) {
  if (values.empty())
    return 0;
  size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + middle, values.end());
  double upper = values[middle];
  if (values.size() % 2)
    return upper;
  double lower = *std::max_element(values.begin(), values.begin() + middle);
  return (lower + upper) / 2;
}

} // namespace lcc::train
