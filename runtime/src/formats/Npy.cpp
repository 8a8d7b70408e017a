//===- Npy.cpp - NumPy .npy files -----------------------------------------===//
//
// Format: the magic "\x93NUMPY", a major and a minor version byte, the
// header length (uint16 for 1.0, uint32 for 2.0, little-endian), then a
// Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (1, 512), }
// padded with spaces and a newline, then the raw elements.
//
//===----------------------------------------------------------------------===//

#include "formats/Npy.h"

#include "support/File.h"

#include <cstring>
#include <new>
#include <sstream>

namespace lcc::runtime {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
/// numpy writes headers of a few hundred bytes; version 2.0's 4-byte
/// length could claim 4 GiB.
constexpr uint64_t kMaxHeaderBytes = uint64_t(1) << 20;

struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

/// Parses the header dict. Only what numpy writes is accepted: string keys,
/// a string, a bool and a tuple of non-negative integers.
class HeaderParser {
public:
  explicit HeaderParser(const std::string &text) : text(text) {}

  StatusOr<NpyHeader> parse() {
    NpyHeader header;
    bool seenDescr = false, seenOrder = false, seenShape = false;
    skipSpace();
    if (!consume('{'))
      return error("expected '{'");
    for (;;) {
      skipSpace();
      if (consume('}'))
        break;
      StatusOr<std::string> key = parseString();
      if (!key.ok())
        return key.getStatus();
      skipSpace();
      if (!consume(':'))
        return error("expected ':' after " + quoted(*key));
      skipSpace();
      // A repeated key would let the last one silently win.
      if ((*key == "descr" && seenDescr) ||
          (*key == "fortran_order" && seenOrder) ||
          (*key == "shape" && seenShape))
        return error("duplicate key " + quoted(*key));
      if (*key == "descr") {
        StatusOr<std::string> descr = parseString();
        if (!descr.ok())
          return descr.getStatus();
        header.descr = *descr;
        seenDescr = true;
      } else if (*key == "fortran_order") {
        if (text.compare(pos, 4, "True") == 0) {
          header.fortranOrder = true;
          pos += 4;
        } else if (text.compare(pos, 5, "False") == 0) {
          pos += 5;
        } else {
          return error("expected True or False for 'fortran_order'");
        }
        seenOrder = true;
      } else if (*key == "shape") {
        Status status = parseShape(header.shape);
        if (!status.ok())
          return status;
        seenShape = true;
      } else {
        return error("unexpected key " + quoted(*key));
      }
      skipSpace();
      if (consume(','))
        continue;
      skipSpace();
      if (consume('}'))
        break;
      return error("expected ',' or '}'");
    }
    if (!seenDescr || !seenOrder || !seenShape)
      return error(std::string("missing key '") +
                   (!seenDescr   ? "descr"
                    : !seenOrder ? "fortran_order"
                                 : "shape") +
                   "'");
    return header;
  }

private:
  Status error(const std::string &what) {
    return invalidData("malformed .npy header: ", what);
  }

  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\n' ||
                                 text[pos] == '\t' || text[pos] == '\r'))
      ++pos;
  }

  bool consume(char c) {
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }

  StatusOr<std::string> parseString() {
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
      return error("expected a quoted string");
    char quote = text[pos++];
    size_t end = text.find(quote, pos);
    if (end == std::string::npos)
      return error("unterminated string");
    std::string value = text.substr(pos, end - pos);
    pos = end + 1;
    return value;
  }

  Status parseShape(std::vector<int64_t> &shape) {
    if (!consume('('))
      return error("expected '(' for 'shape'");
    for (;;) {
      skipSpace();
      if (consume(')'))
        return Status();
      if (pos >= text.size() || text[pos] < '0' || text[pos] > '9')
        return error("expected a dimension in 'shape'");
      int64_t dim = 0;
      while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
        if (dim > (INT64_MAX - 9) / 10)
          return error("dimension too large in 'shape'");
        dim = dim * 10 + (text[pos++] - '0');
      }
      // numpy writes 3L on Python 2.
      consume('L');
      shape.push_back(dim);
      skipSpace();
      if (consume(','))
        continue;
      skipSpace();
      if (consume(')'))
        return Status();
      return error("expected ',' or ')' in 'shape'");
    }
  }

  const std::string &text;
  size_t pos = 0;
};

StatusOr<DType> dtypeFromDescr(const std::string &descr) {
  if (descr.size() >= 2 && descr[0] == '>')
    return invalidData("big-endian data (", quoted(descr),
                       ") is not supported; save it little-endian");
  static const struct {
    const char *code;
    DType dtype;
  } kCodes[] = {{"f4", DType::F32},
                {"f2", DType::F16},
                {"i4", DType::I32},
                {"i8", DType::I64}};
  // '<' is little-endian, '=' native (little-endian on every host lcc
  // supports).
  if (descr.size() == 3 && (descr[0] == '<' || descr[0] == '='))
    for (const auto &code : kCodes)
      if (descr.compare(1, 2, code.code) == 0)
        return code.dtype;
  // numpy has no bf16; ml_dtypes' bfloat16 (JAX's) saves as 2-byte void.
  if (descr == "<V2" || descr == "|V2" || descr == "=V2")
    return DType::BF16;
  return invalidData("unsupported dtype ", quoted(descr),
                     "; expected one of '<f4', '<f2', '<V2' (bf16, as "
                     "ml_dtypes saves it), '<i4', '<i8'");
}

const char *descrFor(DType dtype) {
  switch (dtype) {
  case DType::F32:
  case DType::BF16: // widened to f32
    return "<f4";
  case DType::F16:
    return "<f2";
  case DType::I32:
    return "<i4";
  case DType::I64:
    return "<i8";
  }
  return "<f4";
}

uint32_t readLittleEndian(const uint8_t *bytes, size_t count) {
  uint32_t value = 0;
  for (size_t i = 0; i < count; ++i)
    value |= uint32_t(bytes[i]) << (8 * i);
  return value;
}

/// The fixed prefix: magic, version and header length.
struct NpyPrefix {
  size_t size = 0; // bytes of the prefix itself
  uint64_t headerLength = 0;
};

StatusOr<NpyPrefix> parsePrefix(const uint8_t *data, size_t size) {
  if (size < kMagicSize + 2 || std::memcmp(data, kMagic, kMagicSize) != 0)
    return invalidData("not a .npy file (no \\x93NUMPY magic)");
  uint8_t major = data[6], minor = data[7];
  if ((major != 1 && major != 2) || minor != 0)
    return invalidData("unsupported .npy version ", int(major), ".", int(minor),
                       "; expected 1.0 or 2.0");
  size_t lengthSize = major == 1 ? 2 : 4;
  NpyPrefix prefix;
  prefix.size = kMagicSize + 2 + lengthSize;
  if (size < prefix.size)
    return invalidData("truncated .npy header");
  prefix.headerLength = readLittleEndian(data + 8, lengthSize);
  if (prefix.headerLength > kMaxHeaderBytes)
    return invalidData(".npy header of ", prefix.headerLength,
                       " bytes is larger than the ", kMaxHeaderBytes,
                       "-byte limit");
  return prefix;
}

/// The element type, shape and data bytes a header describes.
struct NpyLayout {
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t dataBytes;
};

StatusOr<NpyLayout> parseLayout(const std::string &text) {
  StatusOr<NpyHeader> header = HeaderParser(text).parse();
  if (!header.ok())
    return header.getStatus();
  if (header->fortranOrder)
    return invalidData("fortran_order arrays are not supported; save the "
                       "array in C order");
  StatusOr<DType> dtype = dtypeFromDescr(header->descr);
  if (!dtype.ok())
    return dtype.getStatus();
  std::optional<uint64_t> bytes = byteSize(*dtype, header->shape);
  if (!bytes)
    return invalidData("shape ", formatShape(header->shape),
                       " is larger than the ", kMaxTensorBytes, "-byte limit");
  return NpyLayout{*dtype, header->shape, *bytes};
}

} // namespace

StatusOr<HostTensor> parseNpy(const uint8_t *data, size_t size) {
  StatusOr<NpyPrefix> prefix = parsePrefix(data, size);
  if (!prefix.ok())
    return prefix.getStatus();
  if (prefix->headerLength > size - prefix->size)
    return invalidData("truncated .npy header: it claims ",
                       prefix->headerLength, " bytes, the file has ",
                       size - prefix->size, " after the length");
  std::string text(reinterpret_cast<const char *>(data + prefix->size),
                   prefix->headerLength);
  StatusOr<NpyLayout> layout = parseLayout(text);
  if (!layout.ok())
    return layout.getStatus();
  size_t start = prefix->size + prefix->headerLength;
  size_t available = size - start;
  std::string type = formatType(layout->shape, layout->dtype);
  if (available < layout->dataBytes)
    return invalidData("truncated data: ", type, " needs ", layout->dataBytes,
                       " bytes, the file has ", available);
  if (available > layout->dataBytes)
    return invalidData(available - layout->dataBytes,
                       " unexpected bytes after the ", type, " data");
  HostTensor tensor;
  tensor.dtype = layout->dtype;
  tensor.shape = layout->shape;
  tensor.data.assign(data + start, data + start + layout->dataBytes);
  return tensor;
}

StatusOr<HostTensor> readNpy(const std::string &path) {
  StatusOr<InputFile> file = InputFile::open(path);
  if (!file.ok())
    return file.getStatus();
  auto bad = [&](const Status &status) { return status.withContext(path); };
  // Header first, then exactly the bytes it describes: a wrong file (or an
  // endless one) is refused without reading more than its header.
  std::vector<uint8_t> bytes(kMagicSize + 2 + 4);
  StatusOr<size_t> got = file->read(bytes.data(), kMagicSize + 2 + 2);
  if (!got.ok())
    return got.getStatus();
  bytes.resize(*got);
  if (bytes.empty() && !file->getRegularSize())
    return bad(invalidData("the stream is empty (a FIFO no process writes?)"));
  if (bytes.size() >= kMagicSize + 2 && bytes[6] == 2) {
    std::vector<uint8_t> more;
    Status rest = file->readExactly(more, 2, ".npy header");
    bytes.insert(bytes.end(), more.begin(), more.end());
    if (!rest.ok())
      return bad(invalidData("truncated .npy header"));
  }
  StatusOr<NpyPrefix> prefix = parsePrefix(bytes.data(), bytes.size());
  if (!prefix.ok())
    return bad(prefix.getStatus());
  std::vector<uint8_t> header;
  Status read = file->readExactly(header, prefix->headerLength, ".npy header");
  if (!read.ok())
    return bad(read);
  StatusOr<NpyLayout> layout =
      parseLayout(std::string(header.begin(), header.end()));
  if (!layout.ok())
    return bad(layout.getStatus());
  std::string type = formatType(layout->shape, layout->dtype);
  if (std::optional<uint64_t> size = file->getRegularSize()) {
    uint64_t start = prefix->size + prefix->headerLength;
    uint64_t available = *size - std::min(*size, start);
    if (available < layout->dataBytes)
      return bad(invalidData("truncated data: ", type, " needs ",
                             layout->dataBytes, " bytes, the file has ",
                             available));
    if (available > layout->dataBytes)
      return bad(invalidData(available - layout->dataBytes,
                             " unexpected bytes after the ", type, " data"));
  }
  // The data is held in memory whole: more than the machine has is this
  // error, named, before any of it is read (a pipe's too: its header says).
  uint64_t memory = physicalMemoryBytes();
  if (layout->dataBytes > memory)
    return bad(Status::error(StatusCode::ResourceExhausted, "its ", type,
                             " data is ", layout->dataBytes,
                             " bytes, more than this machine's ", memory,
                             " bytes of memory"));
  HostTensor tensor;
  tensor.dtype = layout->dtype;
  tensor.shape = layout->shape;
  try {
    read = file->readExactly(tensor.data, layout->dataBytes, type + " data");
  } catch (const std::bad_alloc &) {
    return bad(Status::error(StatusCode::ResourceExhausted,
                             "out of memory for its ", type, " data (",
                             layout->dataBytes, " bytes)"));
  }
  if (!read.ok())
    return bad(read);
  read = file->expectEnd("the " + type + " data");
  if (!read.ok())
    return bad(read);
  return tensor;
}

std::vector<uint8_t> encodeNpy(DType dtype, const std::vector<int64_t> &shape,
                               const void *data) {
  std::ostringstream dict;
  dict << "{'descr': '" << descrFor(dtype)
       << "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i)
    dict << (i ? ", " : "") << shape[i];
  dict << (shape.size() == 1 ? ",), }" : "), }");
  std::string header = dict.str();

  // Pad with spaces and a final newline so the data starts 64-byte aligned,
  // as numpy does.
  auto paddedTotal = [&](size_t prefix) {
    return (prefix + header.size() + 1 + 63) / 64 * 64;
  };
  size_t lengthSize = paddedTotal(10) - 10 <= 65535 ? 2 : 4;
  size_t prefix = kMagicSize + 2 + lengthSize;
  size_t total = paddedTotal(prefix);
  header.append(total - prefix - header.size() - 1, ' ');
  header.push_back('\n');

  std::vector<uint8_t> bytes(kMagic, kMagic + kMagicSize);
  bytes.push_back(lengthSize == 2 ? 1 : 2);
  bytes.push_back(0);
  for (size_t i = 0; i < lengthSize; ++i)
    bytes.push_back(uint8_t(header.size() >> (8 * i)));
  bytes.insert(bytes.end(), header.begin(), header.end());

  uint64_t count = elementCount(shape).value_or(0);
  const uint8_t *elements = static_cast<const uint8_t *>(data);
  if (dtype == DType::BF16) {
    for (uint64_t i = 0; i < count; ++i) {
      float value = float(elementAsDouble(DType::BF16, data, i));
      uint8_t raw[4];
      std::memcpy(raw, &value, 4);
      bytes.insert(bytes.end(), raw, raw + 4);
    }
  } else {
    bytes.insert(bytes.end(), elements, elements + count * dtypeSize(dtype));
  }
  return bytes;
}

Status writeNpy(const std::string &path, DType dtype,
                const std::vector<int64_t> &shape, const void *data) {
  std::vector<uint8_t> bytes = encodeNpy(dtype, shape, data);
  return writeFile(path, bytes.data(), bytes.size());
}

} // namespace lcc::runtime
