//===- Npy.h - NumPy .npy files ---------------------------------*- C++ -*-===//
//
// The tensors lcc-run reads and writes. Versions 1.0 and 2.0, little-endian,
// C order, element types f4, f2, i4 and i8 (the schema's f32, f16, i32,
// i64); anything else is a clear error, never a guess.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_NPY_H
#define LCC_RUNTIME_NPY_H

#include "support/Status.h"
#include "support/Tensor.h"

#include <string>
#include <vector>

namespace lcc::runtime {

/// Decodes the .npy bytes `data`.
StatusOr<HostTensor> parseNpy(const uint8_t *data, size_t size);
/// Reads the .npy file at `path`; errors start with the path.
StatusOr<HostTensor> readNpy(const std::string &path);

/// Encodes a tensor of `dtype` and `shape` whose little-endian elements are
/// `data`. bf16, which .npy cannot hold, is widened to f32 exactly. Uses
/// version 1.0 unless the header needs 2.0.
std::vector<uint8_t> encodeNpy(DType dtype, const std::vector<int64_t> &shape,
                               const void *data);
/// Writes `encodeNpy(...)` to `path`.
Status writeNpy(const std::string &path, DType dtype,
                const std::vector<int64_t> &shape, const void *data);

} // namespace lcc::runtime

#endif // LCC_RUNTIME_NPY_H
