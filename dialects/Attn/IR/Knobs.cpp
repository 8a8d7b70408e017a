//===- Knobs.cpp - the one range check of a knob --------------------------===//

#include "dialects/Attn/IR/Knobs.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

std::string lcc::checkKnob(const IntegerKnob &knob, llvm::StringRef name,
                           int64_t value) {
  if (value < knob.minimum)
    return llvm::formatv("expected {0} >= {1}{2}, got {3}", name, knob.minimum,
                         knob.zeroPicksDefault && knob.minimum == 0
                             ? " (0 picks the default)"
                             : "",
                         value)
        .str();
  if (value > knob.maximum)
    return llvm::formatv("expected {0} <= {1}, got {2}", name, knob.maximum,
                         value)
        .str();
  return "";
}

std::string lcc::checkKnob(const RealKnob &knob, llvm::StringRef name,
                           double value) {
  bool inRange =
      std::isfinite(value) &&
      (knob.minimumExcluded ? value > knob.minimum : value >= knob.minimum) &&
      value <= knob.maximum;
  if (inRange)
    return "";
  std::string text;
  llvm::raw_string_ostream out(text);
  out << "expected " << name << " ";
  if (std::isfinite(knob.maximum))
    out << "in [" << llvm::format("%g", knob.minimum) << ", "
        << llvm::format("%g", knob.maximum) << "]";
  else
    out << (knob.minimumExcluded ? "> " : ">= ")
        << llvm::format("%g", knob.minimum);
  if (!knob.zeroMeans.empty())
    out << " (0 " << knob.zeroMeans << ")";
  out << ", got " << llvm::format("%g", value);
  return text;
}

std::string lcc::choiceNames(const ChoiceKnob &knob) {
  std::string names;
  for (llvm::StringRef choice : knob.choices)
    names += (names.empty() ? "'" : ", '") + choice.str() + "'";
  return names;
}

std::string lcc::checkKnob(const ChoiceKnob &knob, llvm::StringRef name,
                           llvm::StringRef value) {
  if (llvm::is_contained(knob.choices, value))
    return "";
  return ("unknown " + name + " value '" + value + "'; expected one of " +
          choiceNames(knob))
      .str();
}
