//===- Json.cpp - A small JSON reader for safetensors headers -------------===//

#include "Json.h"

#include "Reference.h"

#include <cstdio>

namespace lcc::reference {

namespace {

class JsonParser {
public:
  explicit JsonParser(const std::string &text) : text(text) {}

  JsonValue parseDocument() {
    JsonValue value = parseValue(0);
    skipSpace();
    if (pos != text.size())
      fail("trailing characters");
    return value;
  }

private:
  const std::string &text;
  size_t pos = 0;
  // Deep nesting cannot occur in a safetensors header; refuse it rather
  // than recurse without bound on a hostile file.
  static constexpr int kMaxDepth = 64;

  [[noreturn]] void fail(const std::string &problem) const {
    throw ReferenceError("JSON: " + problem + " at offset " +
                         std::to_string(pos));
  }

  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }

  bool consume(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }

  void expect(char c) {
    if (!consume(c))
      fail(std::string("expected '") + c + "'");
  }

  JsonValue parseValue(int depth) {
    if (depth > kMaxDepth)
      fail("nesting too deep");
    skipSpace();
    if (pos >= text.size())
      fail("unexpected end");
    char c = text[pos];
    JsonValue value;
    if (c == '{') {
      value.kind = JsonValue::Kind::Object;
      ++pos;
      if (consume('}'))
        return value;
      do {
        skipSpace();
        if (pos >= text.size() || text[pos] != '"')
          fail("expected a string key");
        std::string key = parseString();
        if (value.find(key))
          fail("duplicate key \"" + key + "\"");
        expect(':');
        value.members.emplace_back(key, parseValue(depth + 1));
      } while (consume(','));
      expect('}');
    } else if (c == '[') {
      value.kind = JsonValue::Kind::Array;
      ++pos;
      if (consume(']'))
        return value;
      do
        value.elements.push_back(parseValue(depth + 1));
      while (consume(','));
      expect(']');
    } else if (c == '"') {
      value.kind = JsonValue::Kind::String;
      value.text = parseString();
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      value.kind = JsonValue::Kind::Number;
      value.text = parseNumber();
    } else if (text.compare(pos, 4, "true") == 0) {
      value.kind = JsonValue::Kind::Bool;
      value.boolean = true;
      pos += 4;
    } else if (text.compare(pos, 5, "false") == 0) {
      value.kind = JsonValue::Kind::Bool;
      pos += 5;
    } else if (text.compare(pos, 4, "null") == 0) {
      pos += 4;
    } else {
      fail("unexpected character");
    }
    return value;
  }

  static bool isDigit(char c) { return c >= '0' && c <= '9'; }

  std::string parseNumber() {
    size_t start = pos;
    if (text[pos] == '-')
      ++pos;
    if (pos >= text.size() || !isDigit(text[pos]))
      fail("bad number");
    while (pos < text.size() && isDigit(text[pos]))
      ++pos;
    if (pos < text.size() && text[pos] == '.') {
      ++pos;
      if (pos >= text.size() || !isDigit(text[pos]))
        fail("bad number");
      while (pos < text.size() && isDigit(text[pos]))
        ++pos;
    }
    if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
      ++pos;
      if (pos < text.size() && (text[pos] == '+' || text[pos] == '-'))
        ++pos;
      if (pos >= text.size() || !isDigit(text[pos]))
        fail("bad number");
      while (pos < text.size() && isDigit(text[pos]))
        ++pos;
    }
    return text.substr(start, pos - start);
  }

  unsigned hex4() {
    if (pos + 4 > text.size())
      fail("truncated \\u escape");
    unsigned value = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text[pos++];
      value <<= 4;
      if (isDigit(c))
        value |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f')
        value |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        value |= static_cast<unsigned>(c - 'A' + 10);
      else
        fail("bad \\u escape");
    }
    return value;
  }

  static void appendUtf8(std::string &out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  /// Called at the opening quote.
  std::string parseString() {
    ++pos;
    std::string out;
    while (true) {
      if (pos >= text.size())
        fail("unterminated string");
      char c = text[pos++];
      if (c == '"')
        return out;
      if (static_cast<unsigned char>(c) < 0x20)
        fail("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos >= text.size())
        fail("unterminated string");
      char e = text[pos++];
      switch (e) {
      case '"':
      case '\\':
      case '/':
        out += e;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        unsigned cp = hex4();
        // A UTF-16 surrogate pair encodes one code point above U+FFFF.
        if (cp >= 0xD800 && cp < 0xDC00) {
          if (text.compare(pos, 2, "\\u") != 0)
            fail("unpaired surrogate");
          pos += 2;
          unsigned low = hex4();
          if (low < 0xDC00 || low >= 0xE000)
            fail("unpaired surrogate");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        } else if (cp >= 0xDC00 && cp < 0xE000) {
          fail("unpaired surrogate");
        }
        appendUtf8(out, cp);
        break;
      }
      default:
        fail("bad escape");
      }
    }
  }
};

} // namespace

const JsonValue *JsonValue::find(const std::string &key) const {
  for (const auto &member : members)
    if (member.first == key)
      return &member.second;
  return nullptr;
}

uint64_t JsonValue::asUInt64(const std::string &what) const {
  if (kind != Kind::Number || text.empty())
    throw ReferenceError(what + ": expected a non-negative integer");
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      throw ReferenceError(what + ": expected a non-negative integer, got " +
                           text);
    uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10)
      throw ReferenceError(what + ": integer too large: " + text);
    value = value * 10 + digit;
  }
  return value;
}

JsonValue parseJson(const std::string &text) {
  return JsonParser(text).parseDocument();
}

std::string jsonQuote(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

} // namespace lcc::reference
