//===- ReportFormat.h - how lcc-train writes numbers ------------*- C++ -*-===//
//
// The progress line's durations and the JSON report's numbers and lists.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_TOOLS_LCC_TRAIN_REPORTFORMAT_H
#define LCC_TOOLS_LCC_TRAIN_REPORTFORMAT_H

#include <string>
#include <vector>

namespace lcc::train {

/// "0:42", "12:05", "3:02:09".
std::string formatDuration(double seconds);
/// The shortest decimal text that reads back as `value`, as a float when
/// `single` (a loss the device computed in f32), else as a double; JSON
/// null when it is not finite.
std::string jsonNumber(double value, bool single);
/// A JSON list of jsonNumber()s.
std::string jsonList(const std::vector<double> &values, bool single);
/// The median (the mean of the middle two of an even count); 0 if empty.
double median(std::vector<double> values);

} // namespace lcc::train

#endif // LCC_TOOLS_LCC_TRAIN_REPORTFORMAT_H
