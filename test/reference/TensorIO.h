//===- TensorIO.h - .npy and .safetensors files for the reference ---------===//
//
// Self-contained readers and writers, deliberately independent of the
// runtime's own loaders (a shared bug would hide itself).
//
// .npy (NumPy format v1.0; v2.0/v3.0 headers are read too): magic
// "\x93NUMPY", version, little-endian header length, a Python dict literal
// {'descr': ..., 'fortran_order': False, 'shape': (...), } padded with spaces
// and '\n', then the data in C order. Read: <f4 <f8 <i4 <i8. Write: <f4 <i4.
//
// .safetensors: an 8-byte little-endian header length N, N bytes of JSON
// {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]},
// "__metadata__": {...}}, then the data; offsets are relative to the first
// byte after the header. Read: F32 F64 I32 I64 F16 BF16. Write: F32 I32.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_TEST_REFERENCE_TENSORIO_H
#define LCC_TEST_REFERENCE_TENSORIO_H

#include "Reference.h"

#include <map>
#include <string>

namespace lcc::reference {

enum class DType { F32, F64, I32, I64, F16, BF16 };

/// "f32", "i32", ...
std::string dtypeName(DType dtype);

/// The whole file as bytes; throws ReferenceError naming the path.
std::string readFile(const std::string &path);
void writeFile(const std::string &path, const std::string &bytes);

/// .npy from bytes; `what` names the source in errors. The file's dtype is
/// stored in `*dtype` when given.
Tensor parseNpy(const std::string &bytes, const std::string &what,
                DType *dtype = nullptr);
/// .npy bytes of `t` as F32 or I32 (I32 values must be whole numbers that
/// fit in int32).
std::string encodeNpy(const Tensor &t, DType dtype = DType::F32);

Tensor readNpy(const std::string &path, DType *dtype = nullptr);
void writeNpy(const std::string &path, const Tensor &t,
              DType dtype = DType::F32);

/// .safetensors from bytes. The dtype of each tensor is stored in `*dtypes`
/// when given.
std::map<std::string, Tensor>
parseSafetensors(const std::string &bytes, const std::string &what,
                 std::map<std::string, DType> *dtypes = nullptr);
/// .safetensors bytes; each tensor is F32 unless `dtypes` names it I32.
std::string encodeSafetensors(const std::map<std::string, Tensor> &tensors,
                              const std::map<std::string, DType> &dtypes = {});

std::map<std::string, Tensor>
readSafetensors(const std::string &path,
                std::map<std::string, DType> *dtypes = nullptr);
void writeSafetensors(const std::string &path,
                      const std::map<std::string, Tensor> &tensors,
                      const std::map<std::string, DType> &dtypes = {});

} // namespace lcc::reference

#endif // LCC_TEST_REFERENCE_TENSORIO_H
