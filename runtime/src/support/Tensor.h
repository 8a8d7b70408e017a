//===- Tensor.h - element types, shapes and host tensors --------*- C++ -*-===//
//
// The vocabulary shared by the loader, the file formats and the device:
// element types (the schema's lcm::DType), static shapes, and tensors that
// live in host memory (what .npy and .safetensors files hold).
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_TENSOR_H
#define LCC_RUNTIME_TENSOR_H

#include "lcc/lcm_generated.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lcc::runtime {

using lcm::DType;

/// The largest tensor or buffer the runtime accepts. Sizes in a file are
/// untrusted; this bound keeps every size computation far from overflow and
/// turns an absurd size into an error instead of a failed allocation.
constexpr uint64_t kMaxTensorBytes = uint64_t(1) << 40; // 1 TiB

/// Whether `dtype` is one of the schema's values (a file may hold any byte).
bool isValidDType(DType dtype);
/// Bytes per element of a valid dtype.
size_t dtypeSize(DType dtype);
/// Short lowercase name used in messages and reports: "f32", "bf16", "i64".
const char *dtypeName(DType dtype);

/// "[1, 512]"; "[]" for a scalar.
std::string formatShape(const std::vector<int64_t> &shape);
/// "[1, 512] i32", as messages print a tensor type.
std::string formatType(const std::vector<int64_t> &shape, DType dtype);

/// The product of the dimensions, or nullopt when a dimension is negative or
/// the product exceeds kMaxTensorBytes.
std::optional<uint64_t> elementCount(const std::vector<int64_t> &shape);
/// Bytes of a dense tensor, or nullopt under the same conditions.
std::optional<uint64_t> byteSize(DType dtype,
                                 const std::vector<int64_t> &shape);

/// IEEE binary16 and bfloat16 conversions, rounding to nearest even.
uint16_t floatToHalf(float value);
float halfToFloat(uint16_t bits);
uint16_t floatToBFloat16(float value);
float bfloat16ToFloat(uint16_t bits);

/// Element `index` of little-endian `data` as a double.
double elementAsDouble(DType dtype, const void *data, size_t index);

/// A dense, C-order tensor in host memory.
struct HostTensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

} // namespace lcc::runtime

#endif // LCC_RUNTIME_TENSOR_H
