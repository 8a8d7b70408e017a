//===- Status.cpp - fallible results of runtime calls ---------------------===//

#include "support/Status.h"

namespace lcc::runtime {

Status Status::withContext(const std::string &context) const {
  if (ok())
    return *this;
  return Status(code, context + ": " + message);
}

std::string quoted(const std::string &text) {
  constexpr size_t kMaxShown = 200;
  static const char digits[] = "0123456789abcdef";
  std::string out = "'";
  for (size_t i = 0; i < text.size() && i < kMaxShown; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\\' || c == '\'') {
      out += '\\';
      out += char(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c >= 0x7f) {
      out += "\\x";
      out += digits[c >> 4];
      out += digits[c & 15];
    } else {
      out += char(c);
    }
  }
  if (text.size() > kMaxShown)
    out += "...";
  return out + "'";
}

} // namespace lcc::runtime
