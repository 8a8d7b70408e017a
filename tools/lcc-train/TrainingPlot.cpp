//===- TrainingPlot.cpp - lcc-train --plot: loss curves as SVG
//-------------===//

#include "TrainingPlot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace lcc::train {
namespace {

constexpr double kWidth = 720, kHeight = 420;
constexpr double kLeft = 70, kRight = 50, kTop = 40, kBottom = 70;
constexpr int kTicks = 5;

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.4g", value);
  return text;
}

/// `text` with the characters XML gives a meaning escaped.
std::string escaped(const std::string &text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '&':
      out += "&amp;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

/// Maps steps and losses to the plot's pixels.
struct Axes {
  double firstStep, lastStep, low, high;

  double x(double step) const {
    double span = std::max(1.0, lastStep - firstStep);
    return kLeft + (step - firstStep) / span * (kWidth - kLeft - kRight);
  }
  double y(double loss) const {
    double span = high > low ? high - low : 1.0;
    return kTop + (high - loss) / span * (kHeight - kTop - kBottom);
  }
};

Axes axesOf(const TrainingCurves &curves) {
  Axes axes{double(curves.firstStep),
            double(curves.firstStep + curves.losses.size() - 1), 0, 0};
  std::vector<double> all;
  for (double v : curves.losses)
    if (std::isfinite(v))
      all.push_back(v);
  for (double v : curves.evalLosses)
    if (std::isfinite(v))
      all.push_back(v);
  if (all.empty())
    return axes;
  auto [low, high] = std::minmax_element(all.begin(), all.end());
  double pad = std::max(1e-6, (*high - *low) * 0.05);
  axes.low = *low - pad;
  axes.high = *high + pad;
  return axes;
}

std::string polyline(const std::vector<std::pair<double, double>> &points,
                     const Axes &axes, const char *color) {
  std::string out = "<polyline fill=\"none\" stroke=\"" + std::string(color) +
                    "\" stroke-width=\"1.5\" points=\"";
  for (auto [step, loss] : points)
    out += number(axes.x(step)) + "," + number(axes.y(loss)) + " ";
  return out + "\"/>\n";
}

std::string gridAndLabels(const TrainingCurves &curves, const Axes &axes) {
  std::string out;
  for (int i = 0; i <= kTicks; ++i) {
    double loss = axes.low + (axes.high - axes.low) * i / kTicks;
    double y = axes.y(loss);
    out += "<line x1=\"" + number(kLeft) + "\" x2=\"" +
           number(kWidth - kRight) + "\" y1=\"" + number(y) + "\" y2=\"" +
           number(y) + "\" stroke=\"#ddd\"/>\n";
    out += "<text x=\"" + number(kLeft - 6) + "\" y=\"" + number(y + 4) +
           "\" text-anchor=\"end\">" + number(loss) + "</text>\n";
    double step =
        axes.firstStep + (axes.lastStep - axes.firstStep) * i / kTicks;
    double x = axes.x(step);
    out += "<text x=\"" + number(x) + "\" y=\"" +
           number(kHeight - kBottom + 18) + "\" text-anchor=\"middle\">" +
           number(std::round(step)) + "</text>\n";
    out += "<text x=\"" + number(x) + "\" y=\"" +
           number(kHeight - kBottom + 34) +
           "\" text-anchor=\"middle\" fill=\"#666\">" +
           std::to_string(uint64_t(std::round(step)) * curves.tokensPerStep) +
           "</text>\n";
  }
  out += "<text x=\"" + number(kWidth / 2) + "\" y=\"" + number(kHeight - 14) +
         "\" text-anchor=\"middle\">step (tokens trained below it)</text>\n";
  return out;
}

} // namespace

std::string renderTrainingPlot(const TrainingCurves &curves) {
  Axes axes = axesOf(curves);
  std::string title = escaped(curves.title) +
                      ": loss (blue) and eval loss (orange), " +
                      std::to_string(curves.losses.size()) + " steps";
  // Wide enough for the title too (about 0.6 em a sans-serif character; the
  // headless Chromium test renders it).
  double width = std::max(kWidth, kLeft + 0.6 * 14 * title.size() + 10);
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    std::to_string(int64_t(std::ceil(width))) + "\" height=\"" +
                    number(kHeight) +
                    "\" font-family=\"sans-serif\" font-size=\"12\">\n"
                    "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg += "<text x=\"" + number(kLeft) + "\" y=\"22\" font-size=\"14\">" +
         title + "</text>\n";
  svg += gridAndLabels(curves, axes);
  std::vector<std::pair<double, double>> train, eval;
  for (size_t i = 0; i < curves.losses.size(); ++i)
    if (std::isfinite(curves.losses[i]))
      train.push_back({double(curves.firstStep + i), curves.losses[i]});
  for (size_t i = 0; i < curves.evalLosses.size(); ++i)
    eval.push_back({double(curves.evalSteps[i]), curves.evalLosses[i]});
  svg += "<g class=\"loss\">\n" + polyline(train, axes, "#1f77b4") + "</g>\n";
  svg += "<g class=\"eval-loss\">\n" + polyline(eval, axes, "#ff7f0e");
  for (auto [step, loss] : eval)
    svg += "<circle cx=\"" + number(axes.x(step)) + "\" cy=\"" +
           number(axes.y(loss)) + "\" r=\"3\" fill=\"#ff7f0e\"/>\n";
  return svg + "</g>\n</svg>\n";
}

} // namespace lcc::train
