//===- ToolSupport.h - Flag parsing shared by the reference tools ---------===//
//
// The tools take `--name=value` and `--flag` arguments plus positional
// arguments; every parse error is a ReferenceError that main() prints as one
// line "<tool>: error: <message>".
//
//===----------------------------------------------------------------------===//

#ifndef LCC_TEST_REFERENCE_TOOLSUPPORT_H
#define LCC_TEST_REFERENCE_TOOLSUPPORT_H

#include "Reference.h"

#include <cerrno>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace lcc::reference {

/// Command-line arguments split into flags (repeatable) and positionals.
struct Arguments {
  std::map<std::string, std::vector<std::string>> flags;
  std::vector<std::string> positionals;

  bool has(const std::string &name) const { return flags.count(name) != 0; }

  /// The single value of --name=value; an error if it repeats or has none.
  std::string value(const std::string &name) const {
    auto it = flags.find(name);
    if (it == flags.end())
      throw ReferenceError("missing --" + name);
    const std::vector<std::string> &values = it->second;
    if (values.size() != 1)
      throw ReferenceError("--" + name + " given more than once");
    return values[0];
  }

  /// Every value given for --name (in order).
  std::vector<std::string> values(const std::string &name) const {
    auto it = flags.find(name);
    return it == flags.end() ? std::vector<std::string>{} : it->second;
  }
};

/// Splits argv. `known` maps each accepted flag name to whether it takes a
/// value (--name=value) or not (--name).
inline Arguments parseArguments(int argc, char **argv,
                                const std::map<std::string, bool> &known) {
  Arguments args;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0 || arg == "--") {
      args.positionals.push_back(arg);
      continue;
    }
    size_t eq = arg.find('=');
    std::string name = arg.substr(2, eq == std::string::npos ? eq : eq - 2);
    auto it = known.find(name);
    if (it == known.end())
      throw ReferenceError("unknown option '" + arg + "'");
    bool takesValue = it->second;
    if (takesValue && eq == std::string::npos)
      throw ReferenceError("--" + name + " needs a value (--" + name + "=...)");
    if (!takesValue && eq != std::string::npos)
      throw ReferenceError("--" + name + " takes no value");
    args.flags[name].push_back(takesValue ? arg.substr(eq + 1) : "");
  }
  return args;
}

inline int64_t parseInt64(const std::string &text, const std::string &what) {
  errno = 0;
  char *end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE)
    throw ReferenceError(what + ": '" + text + "' is not an integer");
  return value;
}

inline uint64_t parseUInt64(const std::string &text, const std::string &what) {
  errno = 0;
  char *end = nullptr;
  if (text.empty() || text[0] == '-' || text[0] == '+')
    throw ReferenceError(what + ": '" + text +
                         "' is not a non-negative integer");
  unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE)
    throw ReferenceError(what + ": '" + text +
                         "' is not a non-negative integer");
  return value;
}

inline double parseDouble(const std::string &text, const std::string &what) {
  errno = 0;
  char *end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE)
    throw ReferenceError(what + ": '" + text + "' is not a number");
  return value;
}

/// "a,b,c" -> {"a", "b", "c"}.
inline std::vector<std::string> splitCommas(const std::string &text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos)
      return parts;
    start = comma + 1;
  }
}

} // namespace lcc::reference

#endif // LCC_TEST_REFERENCE_TOOLSUPPORT_H
