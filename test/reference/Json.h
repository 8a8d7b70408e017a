//===- Json.h - A small JSON reader for safetensors headers ---------------===//
//
// Just enough JSON for a .safetensors header: objects, arrays, strings,
// numbers, true/false/null. Numbers keep their text so that byte offsets are
// read exactly as unsigned integers.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_TEST_REFERENCE_JSON_H
#define LCC_TEST_REFERENCE_JSON_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace lcc::reference {

struct JsonValue {
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  /// The number's text for Number, the decoded text for String.
  std::string text;
  std::vector<JsonValue> elements;
  /// Members in file order; parseJson rejects duplicate keys.
  std::vector<std::pair<std::string, JsonValue>> members;

  /// The member called `key`, or null if there is none (objects only).
  const JsonValue *find(const std::string &key) const;
  /// A Number that is a plain non-negative integer (no sign, fraction or
  /// exponent) that fits in uint64_t; throws ReferenceError otherwise.
  uint64_t asUInt64(const std::string &what) const;
};

/// Parses one JSON document (surrounding whitespace allowed). Throws
/// ReferenceError "JSON: <problem> at offset N".
JsonValue parseJson(const std::string &text);

/// `s` as a JSON string literal, with quotes and escapes.
std::string jsonQuote(const std::string &s);

} // namespace lcc::reference

#endif // LCC_TEST_REFERENCE_JSON_H
