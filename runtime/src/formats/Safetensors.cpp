//===- Safetensors.cpp - .safetensors weight files ------------------------===//

#include "formats/Safetensors.h"

#include "support/File.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace lcc::runtime {
namespace {

/// The safetensors reference implementation rejects larger headers too.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
constexpr int kMaxJsonDepth = 64;

/// A parsed JSON value; numbers keep their text, since the header holds
/// 64-bit integers that a double cannot represent.
struct JsonValue {
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  std::string text; // String: the decoded value; Number: the literal
  std::vector<JsonValue> items;
  std::vector<std::pair<std::string, JsonValue>> members;
};

/// A small recursive-descent JSON parser (RFC 8259), enough for headers.
class JsonParser {
public:
  explicit JsonParser(const std::string &text) : text(text) {}

  StatusOr<JsonValue> parseDocument() {
    JsonValue value;
    LCC_RETURN_IF_ERROR(parseValue(value, 0));
    skipSpace();
    if (pos != text.size())
      return error("unexpected text after the header object");
    return value;
  }

private:
  Status error(const std::string &what) {
    return invalidData("malformed JSON header at byte ", pos, ": ", what);
  }

  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }

  bool consumeWord(const char *word) {
    size_t length = std::strlen(word);
    if (text.compare(pos, length, word) != 0)
      return false;
    pos += length;
    return true;
  }

  Status parseValue(JsonValue &value, int depth) {
    if (depth > kMaxJsonDepth)
      return error("nesting deeper than 64");
    skipSpace();
    if (pos >= text.size())
      return error("unexpected end");
    char c = text[pos];
    if (c == '{')
      return parseObject(value, depth);
    if (c == '[')
      return parseArray(value, depth);
    if (c == '"') {
      value.kind = JsonValue::Kind::String;
      return parseString(value.text);
    }
    if (c == '-' || (c >= '0' && c <= '9'))
      return parseNumber(value);
    for (const char *word : {"true", "false"})
      if (consumeWord(word)) {
        value.kind = JsonValue::Kind::Bool;
        value.text = word;
        return Status();
      }
    if (consumeWord("null")) {
      value.kind = JsonValue::Kind::Null;
      return Status();
    }
    return error(std::string("unexpected character '") + c + "'");
  }

  Status parseObject(JsonValue &value, int depth) {
    value.kind = JsonValue::Kind::Object;
    ++pos; // '{'
    skipSpace();
    if (pos < text.size() && text[pos] == '}') {
      ++pos;
      return Status();
    }
    for (;;) {
      skipSpace();
      if (pos >= text.size() || text[pos] != '"')
        return error("expected a member name");
      std::string key;
      LCC_RETURN_IF_ERROR(parseString(key));
      skipSpace();
      if (pos >= text.size() || text[pos] != ':')
        return error("expected ':'");
      ++pos;
      value.members.emplace_back(std::move(key), JsonValue());
      LCC_RETURN_IF_ERROR(parseValue(value.members.back().second, depth + 1));
      skipSpace();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == '}') {
        ++pos;
        return Status();
      }
      return error("expected ',' or '}'");
    }
  }

  Status parseArray(JsonValue &value, int depth) {
    value.kind = JsonValue::Kind::Array;
    ++pos; // '['
    skipSpace();
    if (pos < text.size() && text[pos] == ']') {
      ++pos;
      return Status();
    }
    for (;;) {
      value.items.emplace_back();
      LCC_RETURN_IF_ERROR(parseValue(value.items.back(), depth + 1));
      skipSpace();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == ']') {
        ++pos;
        return Status();
      }
      return error("expected ',' or ']'");
    }
  }

  Status parseNumber(JsonValue &value) {
    size_t start = pos;
    auto digits = [&] {
      size_t first = pos;
      while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9')
        ++pos;
      return pos > first;
    };
    if (text[pos] == '-')
      ++pos;
    if (!digits())
      return error("malformed number");
    if (pos < text.size() && text[pos] == '.') {
      ++pos;
      if (!digits())
        return error("malformed number");
    }
    if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
      ++pos;
      if (pos < text.size() && (text[pos] == '+' || text[pos] == '-'))
        ++pos;
      if (!digits())
        return error("malformed number");
    }
    value.kind = JsonValue::Kind::Number;
    value.text = text.substr(start, pos - start);
    return Status();
  }

  static void appendUtf8(std::string &out, uint32_t code) {
    if (code < 0x80) {
      out += char(code);
    } else if (code < 0x800) {
      out += char(0xc0 | (code >> 6));
      out += char(0x80 | (code & 0x3f));
    } else if (code < 0x10000) {
      out += char(0xe0 | (code >> 12));
      out += char(0x80 | ((code >> 6) & 0x3f));
      out += char(0x80 | (code & 0x3f));
    } else {
      out += char(0xf0 | (code >> 18));
      out += char(0x80 | ((code >> 12) & 0x3f));
      out += char(0x80 | ((code >> 6) & 0x3f));
      out += char(0x80 | (code & 0x3f));
    }
  }

  bool parseHex4(uint32_t &code) {
    if (text.size() - pos < 4)
      return false;
    code = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text[pos++];
      code <<= 4;
      if (c >= '0' && c <= '9')
        code |= uint32_t(c - '0');
      else if (c >= 'a' && c <= 'f')
        code |= uint32_t(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        code |= uint32_t(c - 'A' + 10);
      else
        return false;
    }
    return true;
  }

  Status parseString(std::string &out) {
    ++pos; // '"'
    for (;;) {
      if (pos >= text.size())
        return error("unterminated string");
      char c = text[pos++];
      if (c == '"')
        return Status();
      if (static_cast<unsigned char>(c) < 0x20)
        return error("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos >= text.size())
        return error("unterminated string");
      char escape = text[pos++];
      switch (escape) {
      case '"':
      case '\\':
      case '/':
        out += escape;
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
        uint32_t code;
        if (!parseHex4(code))
          return error("malformed \\u escape");
        if (code >= 0xd800 && code < 0xdc00) {
          // A high surrogate must be followed by an escaped low surrogate.
          uint32_t low;
          if (!consumeWord("\\u") || !parseHex4(low) || low < 0xdc00 ||
              low >= 0xe000)
            return error("unpaired UTF-16 surrogate");
          code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
        } else if (code >= 0xdc00 && code < 0xe000) {
          return error("unpaired UTF-16 surrogate");
        }
        appendUtf8(out, code);
        break;
      }
      default:
        return error(std::string("unknown escape '\\") + escape + "'");
      }
    }
  }

  const std::string &text;
  size_t pos = 0;
};

/// A non-negative JSON integer that fits in 63 bits, or nullopt.
std::optional<int64_t> asCount(const JsonValue &value) {
  if (value.kind != JsonValue::Kind::Number || value.text.empty() ||
      value.text.size() > 18)
    return std::nullopt;
  int64_t result = 0;
  for (char c : value.text) {
    if (c < '0' || c > '9')
      return std::nullopt;
    result = result * 10 + (c - '0');
  }
  return result;
}

const struct {
  const char *name;
  DType dtype;
} kDTypeNames[] = {{"F32", DType::F32},
                   {"F16", DType::F16},
                   {"BF16", DType::BF16},
                   {"I32", DType::I32},
                   {"I64", DType::I64}};

const char *safetensorsDTypeName(DType dtype) {
  for (const auto &entry : kDTypeNames)
    if (entry.dtype == dtype)
      return entry.name;
  return "F32";
}

StatusOr<SafetensorsEntry>
parseEntry(const std::string &name, const JsonValue &value, uint64_t dataSize) {
  std::string what = "tensor " + quoted(name);
  if (value.kind != JsonValue::Kind::Object)
    return invalidData(what, " is not a JSON object");
  const JsonValue *dtype = nullptr, *shape = nullptr, *offsets = nullptr;
  for (const auto &[key, member] : value.members) {
    if (key == "dtype")
      dtype = &member;
    else if (key == "shape")
      shape = &member;
    else if (key == "data_offsets")
      offsets = &member;
  }
  if (!dtype || !shape || !offsets)
    return invalidData(what, " lacks '",
                       !dtype   ? "dtype"
                       : !shape ? "shape"
                                : "data_offsets",
                       "'");

  SafetensorsEntry entry;
  entry.name = name;
  bool knownDType = false;
  if (dtype->kind == JsonValue::Kind::String)
    for (const auto &candidate : kDTypeNames)
      if (dtype->text == candidate.name) {
        entry.dtype = candidate.dtype;
        knownDType = true;
      }
  if (!knownDType)
    return invalidData(what, " has unsupported dtype ", quoted(dtype->text),
                       "; expected one of F32, F16, BF16, I32, I64");

  if (shape->kind != JsonValue::Kind::Array)
    return invalidData(what, " has a 'shape' that is not an array");
  for (const JsonValue &dim : shape->items) {
    std::optional<int64_t> count = asCount(dim);
    if (!count)
      return invalidData(what, " has a bad dimension ", quoted(dim.text),
                         " in 'shape'");
    entry.shape.push_back(*count);
  }
  std::optional<uint64_t> bytes = byteSize(entry.dtype, entry.shape);
  if (!bytes)
    return invalidData(what, " of shape ", formatShape(entry.shape),
                       " is larger than the ", kMaxTensorBytes, "-byte limit");

  std::optional<int64_t> begin, end;
  if (offsets->kind == JsonValue::Kind::Array && offsets->items.size() == 2) {
    begin = asCount(offsets->items[0]);
    end = asCount(offsets->items[1]);
  }
  if (!begin || !end || *begin > *end)
    return invalidData(what, " has malformed 'data_offsets'; expected "
                             "[begin, end] with begin <= end");
  entry.begin = uint64_t(*begin);
  entry.end = uint64_t(*end);
  if (entry.end > dataSize)
    return invalidData(what, " has data_offsets [", entry.begin, ", ",
                       entry.end, "] beyond the ", dataSize,
                       " data bytes of the file");
  if (entry.end - entry.begin != *bytes)
    return invalidData(what, " of type ", formatType(entry.shape, entry.dtype),
                       " needs ", *bytes, " bytes, its data_offsets [",
                       entry.begin, ", ", entry.end, "] hold ",
                       entry.end - entry.begin);
  return entry;
}

void appendJsonString(std::string &out, const std::string &value) {
  out += '"';
  for (char c : value) {
    unsigned char byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20) {
      static const char digits[] = "0123456789abcdef";
      out += "\\u00";
      out += digits[byte >> 4];
      out += digits[byte & 15];
    } else {
      out += c;
    }
  }
  out += '"';
}

} // namespace

StatusOr<SafetensorsHeader> parseSafetensorsHeader(const std::string &json,
                                                   uint64_t dataSize) {
  StatusOr<JsonValue> document = JsonParser(json).parseDocument();
  if (!document.ok())
    return document.getStatus();
  if (document->kind != JsonValue::Kind::Object)
    return invalidData("the JSON header is not an object");
  SafetensorsHeader header;
  std::map<std::string, bool> seen;
  for (const auto &[name, value] : document->members) {
    if (!seen.emplace(name, true).second)
      return invalidData("tensor ", quoted(name),
                         " appears twice in the header");
    if (name == "__metadata__") {
      if (value.kind != JsonValue::Kind::Object)
        return invalidData("'__metadata__' is not a JSON object");
      for (const auto &[key, item] : value.members) {
        if (item.kind != JsonValue::Kind::String)
          return invalidData("'__metadata__' value ", quoted(key),
                             " is not a string");
        header.metadata[key] = item.text;
      }
      continue;
    }
    StatusOr<SafetensorsEntry> entry = parseEntry(name, value, dataSize);
    if (!entry.ok())
      return entry.getStatus();
    header.entries.push_back(entry.take());
  }
  // Two tensors sharing bytes would alias two parameters: writing one
  // (training, --init-params) would change the other.
  std::vector<const SafetensorsEntry *> byOffset;
  for (const SafetensorsEntry &entry : header.entries)
    byOffset.push_back(&entry);
  std::sort(byOffset.begin(), byOffset.end(),
            [](const SafetensorsEntry *a, const SafetensorsEntry *b) {
              return a->begin < b->begin;
            });
  for (size_t i = 1; i < byOffset.size(); ++i) {
    const SafetensorsEntry &previous = *byOffset[i - 1], &next = *byOffset[i];
    if (next.begin < previous.end && next.end > next.begin)
      return invalidData("tensors ", quoted(previous.name), " [",
                         previous.begin, ", ", previous.end, ") and ",
                         quoted(next.name), " [", next.begin, ", ", next.end,
                         ") overlap in the data section");
  }
  return header;
}

StatusOr<std::unique_ptr<SafetensorsReader>>
SafetensorsReader::open(const std::string &path) {
  std::unique_ptr<SafetensorsReader> reader(new SafetensorsReader());
  reader->path = path;
  reader->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (reader->fd < 0)
    return Status::error(errno == ENOENT ? StatusCode::NotFound
                                         : StatusCode::InvalidArgument,
                         "cannot open ", quoted(path), ": ",
                         std::strerror(errno));
  struct stat info;
  if (::fstat(reader->fd, &info) != 0 || !S_ISREG(info.st_mode))
    return Status::error(StatusCode::InvalidArgument, "cannot read ",
                         quoted(path), ": not a regular file");
  uint64_t fileSize = uint64_t(info.st_size);
  auto bad = [&](Status status) { return status.withContext(path); };

  uint8_t prefix[8];
  if (fileSize < 8 || ::pread(reader->fd, prefix, 8, 0) != 8)
    return bad(invalidData("file of ", fileSize,
                           " bytes is too small to be a .safetensors file"));
  uint64_t headerSize = 0;
  for (int i = 0; i < 8; ++i)
    headerSize |= uint64_t(prefix[i]) << (8 * i);
  if (headerSize > kMaxHeaderBytes || headerSize > fileSize - 8)
    return bad(invalidData("header length ", headerSize, " exceeds the ",
                           fileSize - 8, " bytes after it"));
  std::string json(headerSize, '\0');
  if (::pread(reader->fd, json.data(), headerSize, 8) != ssize_t(headerSize))
    return bad(Status::error(StatusCode::InvalidArgument,
                             "cannot read the header: ", std::strerror(errno)));
  reader->dataStart = 8 + headerSize;
  StatusOr<SafetensorsHeader> header =
      parseSafetensorsHeader(json, fileSize - reader->dataStart);
  if (!header.ok())
    return bad(header.getStatus());
  reader->header = header.take();
  for (size_t i = 0; i < reader->header.entries.size(); ++i)
    reader->byName[reader->header.entries[i].name] = i;
  return reader;
}

SafetensorsReader::~SafetensorsReader() {
  if (fd >= 0)
    ::close(fd);
}

StatusOr<const SafetensorsEntry *>
SafetensorsReader::find(const std::string &name) const {
  auto it = byName.find(name);
  if (it == byName.end())
    return Status::error(StatusCode::NotFound, "weights file ", quoted(path),
                         " has no tensor ", quoted(name));
  return &header.entries[it->second];
}

Status SafetensorsReader::read(const SafetensorsEntry &entry,
                               void *destination) const {
  uint64_t remaining = entry.end - entry.begin;
  uint64_t offset = dataStart + entry.begin;
  char *out = static_cast<char *>(destination);
  while (remaining > 0) {
    ssize_t got = ::pread(fd, out, remaining, off_t(offset));
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      return Status::error(
          StatusCode::InvalidData, "cannot read tensor ", quoted(entry.name),
          " from ", quoted(path), ": ",
          got == 0 ? "unexpected end of file" : std::strerror(errno));
    out += got;
    offset += uint64_t(got);
    remaining -= uint64_t(got);
  }
  return Status();
}

StatusOr<HostTensor>
SafetensorsReader::readTensor(const std::string &name) const {
  StatusOr<const SafetensorsEntry *> entry = find(name);
  if (!entry.ok())
    return entry.getStatus();
  HostTensor tensor;
  tensor.dtype = (*entry)->dtype;
  tensor.shape = (*entry)->shape;
  tensor.data.resize((*entry)->end - (*entry)->begin);
  LCC_RETURN_IF_ERROR(read(**entry, tensor.data.data()));
  return tensor;
}

std::vector<uint8_t>
encodeSafetensorsHeader(const std::vector<SafetensorsLayout> &tensors,
                        const std::map<std::string, std::string> &metadata) {
  std::string json = "{";
  bool first = true;
  if (!metadata.empty()) {
    json += "\"__metadata__\":{";
    for (const auto &[key, value] : metadata) {
      if (!first)
        json += ',';
      first = false;
      appendJsonString(json, key);
      json += ':';
      appendJsonString(json, value);
    }
    json += '}';
    first = false;
  }
  uint64_t offset = 0;
  for (const SafetensorsLayout &tensor : tensors) {
    if (!first)
      json += ',';
    first = false;
    appendJsonString(json, tensor.name);
    json += ":{\"dtype\":\"";
    json += safetensorsDTypeName(tensor.dtype);
    json += "\",\"shape\":[";
    for (size_t i = 0; i < tensor.shape.size(); ++i)
      json += (i ? "," : "") + std::to_string(tensor.shape[i]);
    uint64_t end = offset + tensor.bytes;
    json += "],\"data_offsets\":[" + std::to_string(offset) + "," +
            std::to_string(end) + "]}";
    offset = end;
  }
  json += '}';
  // Pad with spaces so the data section starts 8-byte aligned, as the
  // reference implementation does.
  json.append((8 - json.size() % 8) % 8, ' ');

  std::vector<uint8_t> bytes;
  for (int i = 0; i < 8; ++i)
    bytes.push_back(uint8_t(uint64_t(json.size()) >> (8 * i)));
  bytes.insert(bytes.end(), json.begin(), json.end());
  return bytes;
}

std::vector<uint8_t>
encodeSafetensors(const std::vector<NamedTensor> &tensors,
                  const std::map<std::string, std::string> &metadata) {
  std::vector<SafetensorsLayout> layout;
  for (const NamedTensor &named : tensors)
    layout.push_back({named.name, named.tensor.dtype, named.tensor.shape,
                      named.tensor.data.size()});
  std::vector<uint8_t> bytes = encodeSafetensorsHeader(layout, metadata);
  for (const NamedTensor &named : tensors)
    bytes.insert(bytes.end(), named.tensor.data.begin(),
                 named.tensor.data.end());
  return bytes;
}

StatusOr<SafetensorsWriter>
SafetensorsWriter::create(const std::string &path,
                          const std::vector<SafetensorsLayout> &tensors,
                          const std::map<std::string, std::string> &metadata) {
  auto refuse = [&](const auto &...parts) {
    return Status::error(StatusCode::InvalidArgument, "cannot write ",
                         quoted(path), ": ", parts...);
  };
  std::map<std::string, bool> names;
  uint64_t dataBytes = 0;
  for (const SafetensorsLayout &tensor : tensors) {
    if (tensor.name == "__metadata__")
      return refuse("'__metadata__' is reserved and cannot name a tensor");
    if (!names.emplace(tensor.name, true).second)
      return refuse("tensor ", quoted(tensor.name), " appears twice");
    std::optional<uint64_t> bytes = isValidDType(tensor.dtype)
                                        ? byteSize(tensor.dtype, tensor.shape)
                                        : std::nullopt;
    if (!bytes || *bytes != tensor.bytes)
      return refuse("tensor ", quoted(tensor.name), " has ", tensor.bytes,
                    " bytes of data, not those of a ",
                    isValidDType(tensor.dtype)
                        ? formatType(tensor.shape, tensor.dtype)
                        : formatShape(tensor.shape) + " tensor of unknown "
                                                      "dtype");
    dataBytes += *bytes;
  }
  StatusOr<OutputFile> file = OutputFile::create(path);
  if (!file.ok())
    return file.getStatus();
  std::vector<uint8_t> header = encodeSafetensorsHeader(tensors, metadata);
  LCC_RETURN_IF_ERROR(file->write(header.data(), header.size()));
  return SafetensorsWriter(file.take(), dataBytes);
}

Status SafetensorsWriter::write(const void *data, size_t size) {
  if (size > dataBytes - written)
    return Status::error(StatusCode::Internal, "writing ", size,
                         " bytes past the end of a .safetensors file");
  written += size;
  return file.write(data, size);
}

Status SafetensorsWriter::commit() {
  if (written != dataBytes)
    return Status::error(StatusCode::Internal, "a .safetensors file got ",
                         written, " of its ", dataBytes, " data bytes");
  return file.commit();
}

Status writeSafetensors(const std::string &path,
                        const std::vector<NamedTensor> &tensors,
                        const std::map<std::string, std::string> &metadata) {
  std::vector<SafetensorsLayout> layout;
  for (const NamedTensor &named : tensors)
    layout.push_back({named.name, named.tensor.dtype, named.tensor.shape,
                      named.tensor.data.size()});
  StatusOr<SafetensorsWriter> writer =
      SafetensorsWriter::create(path, layout, metadata);
  if (!writer.ok())
    return writer.getStatus();
  for (const NamedTensor &named : tensors)
    LCC_RETURN_IF_ERROR(
        writer->write(named.tensor.data.data(), named.tensor.data.size()));
  return writer->commit();
}

} // namespace lcc::runtime
