//===- TensorIO.cpp - .npy and .safetensors files for the reference -------===//

#include "TensorIO.h"

#include "Json.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

namespace lcc::reference {

std::string dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  }
  return "unknown";
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw ReferenceError("cannot open '" + path + "': " + std::strerror(errno));
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  if (in.bad())
    throw ReferenceError("cannot read '" + path + "'");
  return bytes;
}

void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    throw ReferenceError("cannot create '" + path +
                         "': " + std::strerror(errno));
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out)
    throw ReferenceError("cannot write '" + path + "'");
}

namespace {

//===----------------------------------------------------------------------===//
// Element encoding (little-endian, whatever the host)
//===----------------------------------------------------------------------===//

int64_t itemSize(DType dtype) {
  switch (dtype) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::F16:
  case DType::BF16:
    return 2;
  }
  return 0;
}

uint64_t loadLittleEndian(const unsigned char *p, int bytes) {
  uint64_t value = 0;
  for (int i = bytes - 1; i >= 0; --i)
    value = (value << 8) | p[i];
  return value;
}

void storeLittleEndian(std::string &out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out += static_cast<char>((value >> (8 * i)) & 0xFF);
}

double halfToDouble(uint16_t bits) {
  int sign = (bits >> 15) ? -1 : 1;
  int exponent = (bits >> 10) & 0x1F;
  int mantissa = bits & 0x3FF;
  if (exponent == 0) // zero or subnormal
    return sign * std::ldexp(mantissa, -24);
  if (exponent == 31)
    return mantissa ? std::numeric_limits<double>::quiet_NaN()
                    : sign * std::numeric_limits<double>::infinity();
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

/// IEEE half nearest to `value` (ties to even; beyond the range, inf).
uint16_t doubleToHalf(double value) {
  uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  double a = std::fabs(value);
  if (std::isnan(a))
    return 0x7E00;
  if (a < std::ldexp(1.0, -14)) // subnormal (or rounds up to the first normal)
    return sign | static_cast<uint16_t>(std::nearbyint(std::ldexp(a, 24)));
  int exponent;
  double fraction = std::frexp(a, &exponent); // a = fraction * 2^exponent
  int biased = exponent - 1 + 15;
  double mantissa = std::nearbyint((fraction * 2 - 1) * 1024);
  if (mantissa == 1024) {
    mantissa = 0;
    ++biased;
  }
  if (biased >= 31)
    return sign | 0x7C00;
  return sign | static_cast<uint16_t>(biased << 10) |
         static_cast<uint16_t>(mantissa);
}

/// The bf16 nearest to `value` (ties to even), the top half of an f32.
uint16_t floatToBFloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if (std::isnan(value))
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7FFF + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

double decodeElement(const unsigned char *p, DType dtype) {
  switch (dtype) {
  case DType::F32: {
    uint32_t bits = static_cast<uint32_t>(loadLittleEndian(p, 4));
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  case DType::F64: {
    uint64_t bits = loadLittleEndian(p, 8);
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
  }
  case DType::I32: {
    uint32_t bits = static_cast<uint32_t>(loadLittleEndian(p, 4));
    int32_t i;
    std::memcpy(&i, &bits, 4);
    return i;
  }
  case DType::I64: {
    uint64_t bits = loadLittleEndian(p, 8);
    int64_t i;
    std::memcpy(&i, &bits, 8);
    return static_cast<double>(i);
  }
  case DType::F16:
    return halfToDouble(static_cast<uint16_t>(loadLittleEndian(p, 2)));
  case DType::BF16: {
    // bf16 is the top half of an f32.
    uint32_t bits = static_cast<uint32_t>(loadLittleEndian(p, 2)) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  }
  return 0;
}

void encodeElement(std::string &out, double value, DType dtype) {
  if (dtype == DType::F32) {
    float f = static_cast<float>(value);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    storeLittleEndian(out, bits, 4);
    return;
  }
  if (dtype == DType::I32) {
    if (!(value >= std::numeric_limits<int32_t>::min() &&
          value <= std::numeric_limits<int32_t>::max()) ||
        value != std::floor(value)) {
      std::ostringstream os;
      os << "value " << value << " is not an int32";
      throw ReferenceError(os.str());
    }
    int32_t i = static_cast<int32_t>(value);
    uint32_t bits;
    std::memcpy(&bits, &i, 4);
    storeLittleEndian(out, bits, 4);
    return;
  }
  if (dtype == DType::F16) {
    storeLittleEndian(out, doubleToHalf(value), 2);
    return;
  }
  if (dtype == DType::BF16) {
    storeLittleEndian(out, floatToBFloat16(static_cast<float>(value)), 2);
    return;
  }
  throw ReferenceError("writing " + dtypeName(dtype) +
                       " is not supported (only f32, i32, f16, bf16)");
}

/// Decodes `count` elements of `dtype` starting at bytes[begin].
std::vector<double> decodeElements(const std::string &bytes, size_t begin,
                                   int64_t count, DType dtype) {
  std::vector<double> values(static_cast<size_t>(count));
  const auto *p = reinterpret_cast<const unsigned char *>(bytes.data()) + begin;
  for (int64_t i = 0; i < count; ++i)
    values[i] = decodeElement(p + i * itemSize(dtype), dtype);
  return values;
}

/// numElements(shape) * itemSize, or an error if it exceeds `available`
/// bytes (so a hostile shape cannot overflow or allocate wildly).
uint64_t byteSizeWithin(const Shape &shape, DType dtype, uint64_t available,
                        const std::string &what) {
  uint64_t bytes = static_cast<uint64_t>(itemSize(dtype));
  for (int64_t d : shape) {
    if (d < 0)
      throw ReferenceError(what + ": negative dimension in shape " +
                           shapeToString(shape));
    if (d == 0)
      return 0;
  }
  for (int64_t d : shape) {
    if (bytes > available / static_cast<uint64_t>(d))
      throw ReferenceError(what + ": shape " + shapeToString(shape) + " of " +
                           dtypeName(dtype) + " needs more than the " +
                           std::to_string(available) + " data bytes present");
    bytes *= static_cast<uint64_t>(d);
  }
  return bytes;
}

//===----------------------------------------------------------------------===//
// .npy header: a Python dict literal
//===----------------------------------------------------------------------===//

struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  Shape shape;
};

class NpyHeaderParser {
public:
  NpyHeaderParser(const std::string &text, const std::string &what)
      : text(text), what(what) {}

  NpyHeader parse() {
    NpyHeader header;
    bool sawDescr = false, sawOrder = false, sawShape = false;
    expect('{');
    while (!peek('}')) {
      std::string key = parseString();
      expect(':');
      if (key == "descr") {
        header.descr = parseString();
        sawDescr = true;
      } else if (key == "fortran_order") {
        header.fortranOrder = parseBool();
        sawOrder = true;
      } else if (key == "shape") {
        header.shape = parseTuple();
        sawShape = true;
      } else {
        fail("unexpected key '" + key + "'");
      }
      if (!peek('}'))
        expect(',');
    }
    expect('}');
    skipSpace();
    if (pos != text.size())
      fail("trailing characters");
    if (!sawDescr || !sawOrder || !sawShape)
      fail("needs 'descr', 'fortran_order' and 'shape'");
    return header;
  }

private:
  const std::string &text;
  const std::string &what;
  size_t pos = 0;

  [[noreturn]] void fail(const std::string &problem) const {
    throw ReferenceError(what + ": bad .npy header: " + problem);
  }
  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\n'))
      ++pos;
  }
  bool peek(char c) {
    skipSpace();
    return pos < text.size() && text[pos] == c;
  }
  void expect(char c) {
    if (!peek(c))
      fail(std::string("expected '") + c + "'");
    ++pos;
  }
  std::string parseString() {
    skipSpace();
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
      fail("expected a quoted string");
    char quote = text[pos++];
    size_t end = text.find(quote, pos);
    if (end == std::string::npos)
      fail("unterminated string");
    std::string s = text.substr(pos, end - pos);
    pos = end + 1;
    return s;
  }
  bool parseBool() {
    skipSpace();
    if (text.compare(pos, 4, "True") == 0) {
      pos += 4;
      return true;
    }
    if (text.compare(pos, 5, "False") == 0) {
      pos += 5;
      return false;
    }
    fail("expected True or False");
  }
  /// "()", "(5,)", "(2, 3)", with an optional trailing comma.
  Shape parseTuple() {
    Shape shape;
    expect('(');
    while (!peek(')')) {
      size_t start = pos;
      int64_t value = 0;
      while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
        if (value > (std::numeric_limits<int64_t>::max() - 9) / 10)
          fail("dimension too large");
        value = value * 10 + (text[pos++] - '0');
      }
      if (pos == start)
        fail("expected a dimension");
      shape.push_back(value);
      if (!peek(')'))
        expect(',');
    }
    expect(')');
    return shape;
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// .npy
//===----------------------------------------------------------------------===//

Tensor parseNpy(const std::string &bytes, const std::string &what,
                DType *dtype) {
  static const char kMagic[] = "\x93NUMPY";
  if (bytes.size() < 10 || bytes.compare(0, 6, kMagic, 6) != 0)
    throw ReferenceError(what + ": not a .npy file (bad magic)");
  const auto *u = reinterpret_cast<const unsigned char *>(bytes.data());
  int major = u[6];
  // v1.0 has a 2-byte header length; v2.0 and v3.0 a 4-byte one.
  int lengthBytes = major == 1 ? 2 : (major == 2 || major == 3) ? 4 : 0;
  if (lengthBytes == 0)
    throw ReferenceError(what + ": unsupported .npy version " +
                         std::to_string(major) + "." + std::to_string(u[7]));
  size_t headerStart = 8 + lengthBytes;
  if (bytes.size() < headerStart)
    throw ReferenceError(what + ": truncated .npy header");
  uint64_t headerLength = loadLittleEndian(u + 8, lengthBytes);
  if (headerLength > bytes.size() - headerStart)
    throw ReferenceError(what + ": truncated .npy header");
  std::string headerText = bytes.substr(headerStart, headerLength);
  NpyHeader header = NpyHeaderParser(headerText, what).parse();

  DType fileType;
  if (header.descr == "<f4")
    fileType = DType::F32;
  else if (header.descr == "<f8")
    fileType = DType::F64;
  else if (header.descr == "<i4")
    fileType = DType::I32;
  else if (header.descr == "<i8")
    fileType = DType::I64;
  else if (header.descr == "<f2")
    fileType = DType::F16;
  else if (header.descr == "<V2" || header.descr == "|V2")
    fileType = DType::BF16; // ml_dtypes' bfloat16
  else
    throw ReferenceError(what + ": unsupported .npy dtype '" + header.descr +
                         "' (supported: <f4, <f8, <i4, <i8, <f2, <V2 as "
                         "bf16)");
  if (header.fortranOrder)
    throw ReferenceError(what + ": Fortran-order .npy is not supported");

  size_t dataStart = headerStart + headerLength;
  uint64_t available = bytes.size() - dataStart;
  uint64_t dataBytes = byteSizeWithin(header.shape, fileType, available, what);
  if (dataBytes != available)
    throw ReferenceError(what + ": .npy data is " + std::to_string(available) +
                         " bytes, shape " + shapeToString(header.shape) +
                         " of " + dtypeName(fileType) + " needs " +
                         std::to_string(dataBytes));
  if (dtype)
    *dtype = fileType;
  return Tensor(
      header.shape,
      decodeElements(bytes, dataStart, numElements(header.shape), fileType));
}

std::string encodeNpy(const Tensor &t, DType dtype) {
  std::string descr;
  if (dtype == DType::F32)
    descr = "<f4";
  else if (dtype == DType::I32)
    descr = "<i4";
  else if (dtype == DType::F16)
    descr = "<f2";
  else if (dtype == DType::BF16)
    descr = "<V2";
  else
    throw ReferenceError("writing .npy of " + dtypeName(dtype) +
                         " is not supported (only f32, i32, f16, bf16)");
  // A Python tuple: "()", "(5,)", "(2, 3)".
  std::string shape = "(";
  for (size_t i = 0; i < t.shape.size(); ++i)
    shape += (i ? ", " : "") + std::to_string(t.shape[i]);
  shape += t.shape.size() == 1 ? ",)" : ")";
  std::string header = "{'descr': '" + descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad with spaces and a final '\n' so the data starts 64-byte aligned, as
  // NumPy does.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  if (header.size() > 65535)
    throw ReferenceError("shape " + shapeToString(t.shape) +
                         " is too long for a v1.0 .npy header");

  std::string out("\x93NUMPY\x01\x00", 8);
  storeLittleEndian(out, header.size(), 2);
  out += header;
  for (double value : t.data)
    encodeElement(out, value, dtype);
  return out;
}

Tensor readNpy(const std::string &path, DType *dtype) {
  return parseNpy(readFile(path), path, dtype);
}

void writeNpy(const std::string &path, const Tensor &t, DType dtype) {
  writeFile(path, encodeNpy(t, dtype));
}

//===----------------------------------------------------------------------===//
// .safetensors
//===----------------------------------------------------------------------===//

namespace {

DType safetensorsDType(const std::string &name, const std::string &what) {
  if (name == "F32")
    return DType::F32;
  if (name == "F64")
    return DType::F64;
  if (name == "I32")
    return DType::I32;
  if (name == "I64")
    return DType::I64;
  if (name == "F16")
    return DType::F16;
  if (name == "BF16")
    return DType::BF16;
  throw ReferenceError(what + ": unsupported dtype \"" + name +
                       "\" (supported: F32, F64, I32, I64, F16, BF16)");
}

std::string safetensorsDTypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "F32";
  case DType::I32:
    return "I32";
  default:
    throw ReferenceError("writing .safetensors of " + dtypeName(dtype) +
                         " is not supported (only f32 and i32)");
  }
}

} // namespace

std::map<std::string, Tensor>
parseSafetensors(const std::string &bytes, const std::string &what,
                 std::map<std::string, DType> *dtypes) {
  if (bytes.size() < 8)
    throw ReferenceError(what + ": truncated .safetensors (no header length)");
  uint64_t headerLength = loadLittleEndian(
      reinterpret_cast<const unsigned char *>(bytes.data()), 8);
  if (headerLength > bytes.size() - 8)
    throw ReferenceError(what + ": .safetensors header length " +
                         std::to_string(headerLength) + " exceeds the file");
  JsonValue header = parseJson(bytes.substr(8, headerLength));
  if (header.kind != JsonValue::Kind::Object)
    throw ReferenceError(what + ": .safetensors header is not a JSON object");

  size_t dataStart = 8 + headerLength;
  uint64_t dataSize = bytes.size() - dataStart;
  std::map<std::string, Tensor> tensors;
  for (const auto &[name, entry] : header.members) {
    if (name == "__metadata__")
      continue;
    std::string where = what + ": tensor '" + name + "'";
    if (entry.kind != JsonValue::Kind::Object)
      throw ReferenceError(where + ": entry is not an object");
    const JsonValue *dtypeValue = entry.find("dtype");
    const JsonValue *shapeValue = entry.find("shape");
    const JsonValue *offsetsValue = entry.find("data_offsets");
    if (!dtypeValue || dtypeValue->kind != JsonValue::Kind::String)
      throw ReferenceError(where + ": missing string \"dtype\"");
    if (!shapeValue || shapeValue->kind != JsonValue::Kind::Array)
      throw ReferenceError(where + ": missing array \"shape\"");
    if (!offsetsValue || offsetsValue->kind != JsonValue::Kind::Array ||
        offsetsValue->elements.size() != 2)
      throw ReferenceError(where + ": missing [begin, end] \"data_offsets\"");

    DType dtype = safetensorsDType(dtypeValue->text, where);
    Shape shape;
    for (const JsonValue &d : shapeValue->elements) {
      uint64_t size = d.asUInt64(where + ": shape");
      if (size > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        throw ReferenceError(where + ": dimension too large");
      shape.push_back(static_cast<int64_t>(size));
    }
    uint64_t begin = offsetsValue->elements[0].asUInt64(where + ": offset");
    uint64_t end = offsetsValue->elements[1].asUInt64(where + ": offset");
    if (begin > end || end > dataSize)
      throw ReferenceError(where + ": data_offsets [" + std::to_string(begin) +
                           ", " + std::to_string(end) + "] outside the " +
                           std::to_string(dataSize) + " data bytes");
    uint64_t needed = byteSizeWithin(shape, dtype, end - begin, where);
    if (needed != end - begin)
      throw ReferenceError(where + ": " + std::to_string(end - begin) +
                           " bytes for shape " + shapeToString(shape) + " of " +
                           dtypeName(dtype) + ", needs " +
                           std::to_string(needed));
    tensors[name] = Tensor(shape, decodeElements(bytes, dataStart + begin,
                                                 numElements(shape), dtype));
    if (dtypes)
      (*dtypes)[name] = dtype;
  }
  return tensors;
}

std::string encodeSafetensors(const std::map<std::string, Tensor> &tensors,
                              const std::map<std::string, DType> &dtypes) {
  std::string header = "{";
  std::string data;
  for (const auto &[name, tensor] : tensors) {
    auto it = dtypes.find(name);
    DType dtype = it == dtypes.end() ? DType::F32 : it->second;
    std::string dtypeText = safetensorsDTypeName(dtype);
    size_t begin = data.size();
    for (double value : tensor.data)
      encodeElement(data, value, dtype);
    std::string shape = "[";
    for (size_t i = 0; i < tensor.shape.size(); ++i)
      shape += (i ? "," : "") + std::to_string(tensor.shape[i]);
    shape += "]";
    if (header.size() > 1)
      header += ",";
    header += jsonQuote(name) + ":{\"dtype\":\"" + dtypeText +
              "\",\"shape\":" + shape + ",\"data_offsets\":[" +
              std::to_string(begin) + "," + std::to_string(data.size()) + "]}";
  }
  header += "}";
  // Pad with spaces so the data starts 8-byte aligned, as safetensors does.
  header.append((8 - header.size() % 8) % 8, ' ');

  std::string out;
  storeLittleEndian(out, header.size(), 8);
  return out + header + data;
}

std::map<std::string, Tensor>
readSafetensors(const std::string &path, std::map<std::string, DType> *dtypes) {
  return parseSafetensors(readFile(path), path, dtypes);
}

void writeSafetensors(const std::string &path,
                      const std::map<std::string, Tensor> &tensors,
                      const std::map<std::string, DType> &dtypes) {
  writeFile(path, encodeSafetensors(tensors, dtypes));
}

} // namespace lcc::reference
