//===- Tensor.cpp - element types, shapes and host tensors ----------------===//

#include "support/Tensor.h"

#include <cmath>
#include <cstring>
#include <sstream>

namespace lcc::runtime {

bool isValidDType(DType dtype) {
  return dtype >= DType::MIN && dtype <= DType::MAX;
}

size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::I64:
    return 8;
  }
  return 0;
}

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  }
  return "unknown";
}

std::string formatShape(const std::vector<int64_t> &shape) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i)
    os << (i ? ", " : "") << shape[i];
  os << ']';
  return os.str();
}

std::string formatType(const std::vector<int64_t> &shape, DType dtype) {
  return formatShape(shape) + " " + dtypeName(dtype);
}

std::optional<uint64_t> elementCount(const std::vector<int64_t> &shape) {
  uint64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0)
      return std::nullopt;
    if (dim == 0)
      return 0;
  }
  for (int64_t dim : shape) {
    // count <= kMaxTensorBytes here; checking against the quotient first
    // keeps the product from wrapping ([2^32, 2^32] is not 0 elements).
    if (uint64_t(dim) > kMaxTensorBytes / count)
      return std::nullopt;
    count *= uint64_t(dim);
  }
  return count;
}

std::optional<uint64_t> byteSize(DType dtype,
                                 const std::vector<int64_t> &shape) {
  std::optional<uint64_t> count = elementCount(shape);
  if (!count || !isValidDType(dtype))
    return std::nullopt;
  uint64_t bytes = *count * dtypeSize(dtype);
  if (bytes > kMaxTensorBytes)
    return std::nullopt;
  return bytes;
}

uint16_t floatToHalf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  uint32_t sign = (bits >> 16) & 0x8000;
  uint32_t exponent = (bits >> 23) & 0xff;
  uint32_t mantissa = bits & 0x7fffff;
  if (exponent == 0xff) // Inf stays Inf; NaN stays a quiet NaN.
    return uint16_t(sign | 0x7c00 | (mantissa ? 0x200 : 0));
  int32_t halfExponent = int32_t(exponent) - 127 + 15;
  if (halfExponent >= 31)
    return uint16_t(sign | 0x7c00);
  if (halfExponent <= 0) {
    // Subnormal half (or zero): shift the mantissa with its implicit bit in
    // and round to nearest even on the bits shifted out.
    if (halfExponent < -10)
      return uint16_t(sign);
    uint32_t full = mantissa | 0x800000;
    uint32_t shift = uint32_t(14 - halfExponent);
    uint32_t half = full >> shift;
    uint32_t rest = full & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1)))
      ++half;
    return uint16_t(sign | half);
  }
  uint32_t half = (uint32_t(halfExponent) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fff;
  // A carry out of the mantissa correctly bumps the exponent (up to Inf).
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half;
  return uint16_t(sign | half);
}

float halfToFloat(uint16_t bits) {
  uint32_t sign = uint32_t(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f;
  uint32_t mantissa = bits & 0x3ff;
  uint32_t result;
  if (exponent == 0x1f) {
    result = sign | 0x7f800000 | (mantissa << 13);
  } else if (exponent != 0) {
    result = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    result = sign;
  } else {
    // Subnormal half: every one is a normal float.
    float magnitude = std::ldexp(float(mantissa), -24);
    std::memcpy(&result, &magnitude, 4);
    result |= sign;
  }
  float value;
  std::memcpy(&value, &result, 4);
  return value;
}

uint16_t floatToBFloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if ((bits & 0x7fffffff) > 0x7f800000) // NaN: keep it a quiet NaN
    return uint16_t((bits >> 16) | 0x40);
  bits += 0x7fff + ((bits >> 16) & 1);
  return uint16_t(bits >> 16);
}

float bfloat16ToFloat(uint16_t bits) {
  uint32_t wide = uint32_t(bits) << 16;
  float value;
  std::memcpy(&value, &wide, 4);
  return value;
}

double elementAsDouble(DType dtype, const void *data, size_t index) {
  const char *base = static_cast<const char *>(data);
  switch (dtype) {
  case DType::F32: {
    float value;
    std::memcpy(&value, base + 4 * index, 4);
    return value;
  }
  case DType::F16:
  case DType::BF16: {
    uint16_t bits;
    std::memcpy(&bits, base + 2 * index, 2);
    return dtype == DType::F16 ? halfToFloat(bits) : bfloat16ToFloat(bits);
  }
  case DType::I32: {
    int32_t value;
    std::memcpy(&value, base + 4 * index, 4);
    return value;
  }
  case DType::I64: {
    int64_t value;
    std::memcpy(&value, base + 8 * index, 8);
    return double(value);
  }
  }
  return 0;
}

} // namespace lcc::runtime
