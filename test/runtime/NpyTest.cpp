//===- NpyTest.cpp - .npy reading and writing -----------------------------===//

#include "formats/Npy.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace lcc;
using namespace lcc::runtime;
using namespace lcc::test;

namespace {

/// A .npy file with header dict `dict` (padded as numpy pads it) followed
/// by `data`.
std::vector<uint8_t> npyBytes(const std::string &dict,
                              const std::vector<uint8_t> &data, int major = 1) {
  std::string header = dict;
  size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  std::vector<uint8_t> bytes = {0x93,           'N', 'U', 'M', 'P', 'Y',
                                uint8_t(major), 0};
  for (size_t i = 0; i < prefix - 8; ++i)
    bytes.push_back(uint8_t(header.size() >> (8 * i)));
  bytes.insert(bytes.end(), header.begin(), header.end());
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

std::string parseError(const std::vector<uint8_t> &bytes) {
  return messageOf(parseNpy(bytes.data(), bytes.size()));
}

TEST(Npy, ReadsWhatNumpyWrites) {
  // np.save of np.arange(6, dtype=np.float32).reshape(2, 3).
  std::vector<uint8_t> data(24);
  for (int i = 0; i < 6; ++i) {
    float value = float(i);
    std::memcpy(data.data() + 4 * i, &value, 4);
  }
  std::vector<uint8_t> bytes = npyBytes(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", data);
  ASSERT_EQ(bytes.size(), 128u + 24u);
  StatusOr<HostTensor> tensor = parseNpy(bytes.data(), bytes.size());
  ASSERT_EQ(messageOf(tensor), "<ok>");
  EXPECT_EQ(tensor->dtype, DType::F32);
  EXPECT_EQ(tensor->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(tensor->data, data);
}

TEST(Npy, RejectsDuplicateKeys) {
  EXPECT_EQ(parseError(npyBytes("{'descr': '<f4', 'fortran_order': False, "
                                "'shape': (2,), 'descr': '<i4', }",
                                std::vector<uint8_t>(8))),
            "malformed .npy header: duplicate key 'descr'");
}

TEST(Npy, RejectsShapesWhoseSizeWraps) {
  // 2^32 * 2^32 elements wrapped to 0 bytes and read as an empty tensor.
  EXPECT_EQ(parseError(npyBytes("{'descr': '<f4', 'fortran_order': False, "
                                "'shape': (4294967296, 4294967296), }",
                                {})),
            "shape [4294967296, 4294967296] is larger than the "
            "1099511627776-byte limit");
}

TEST(Npy, EscapesWhatItEchoes) {
  EXPECT_EQ(parseError(npyBytes("{'descr': '<f4', 'fortran_order': False, "
                                "'shape': (2,), 'x\nlcc-run: error: y': 1}",
                                std::vector<uint8_t>(8))),
            "malformed .npy header: unexpected key 'x\\nlcc-run: error: y'");
}

// A file is read header first and then exactly the bytes it describes: an
// endless stream ends in an error after its data, not in running out of
// memory.
TEST(Npy, StopsReadingAStreamAfterItsData) {
  TempDir dir;
  std::vector<uint8_t> bytes =
      npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
               std::vector<uint8_t>(8));
  std::vector<uint8_t> longer = bytes;
  longer.push_back(0);
  writeBytes(dir.file("long.npy"), longer);
  EXPECT_EQ(messageOf(readNpy(dir.file("long.npy"))),
            dir.file("long.npy") +
                ": 1 unexpected bytes after the [2] f32 data");
  bytes.resize(bytes.size() - 3);
  writeBytes(dir.file("short.npy"), bytes);
  EXPECT_EQ(messageOf(readNpy(dir.file("short.npy"))),
            dir.file("short.npy") +
                ": truncated data: [2] f32 needs 8 bytes, the file has 5");
  EXPECT_EQ(messageOf(readNpy("/dev/zero")),
            "/dev/zero: not a .npy file (no \\x93NUMPY magic)");
}

TEST(Npy, ReadsVersion2AndOtherKeyOrders) {
  std::vector<uint8_t> data = {1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0};
  StatusOr<HostTensor> tensor = parseNpy(
      npyBytes("{\"shape\": (2,), \"fortran_order\": False, \"descr\": "
               "'<i8'}",
               data, 2)
          .data(),
      npyBytes("{\"shape\": (2,), \"fortran_order\": False, \"descr\": "
               "'<i8'}",
               data, 2)
          .size());
  ASSERT_EQ(messageOf(tensor), "<ok>");
  EXPECT_EQ(tensor->dtype, DType::I64);
  EXPECT_EQ(tensor->shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(tensor->data, data);
}

TEST(Npy, RoundTripsEveryDTypeAndRank) {
  TempDir dir;
  struct Case {
    DType dtype;
    std::vector<int64_t> shape;
  };
  for (const Case &c :
       {Case{DType::F32, {}}, Case{DType::F32, {0}}, Case{DType::F16, {5}},
        Case{DType::I32, {2, 3, 4}}, Case{DType::I64, {3, 1}},
        Case{DType::F32, {1, 0, 7}}}) {
    size_t bytes = *byteSize(c.dtype, c.shape);
    std::vector<uint8_t> data(bytes);
    for (size_t i = 0; i < bytes; ++i)
      data[i] = uint8_t(i * 37 + 11);
    std::string path = dir.file("t.npy");
    ASSERT_EQ(messageOf(writeNpy(path, c.dtype, c.shape, data.data())), "<ok>");
    StatusOr<HostTensor> tensor = readNpy(path);
    ASSERT_EQ(messageOf(tensor), "<ok>");
    EXPECT_EQ(tensor->dtype, c.dtype);
    EXPECT_EQ(tensor->shape, c.shape);
    EXPECT_EQ(tensor->data, data);
    // The data starts 64-byte aligned, in a version 1.0 file.
    std::vector<uint8_t> encoded = encodeNpy(c.dtype, c.shape, data.data());
    EXPECT_EQ((encoded.size() - bytes) % 64, 0u);
    EXPECT_EQ(encoded[6], 1);
  }
}

TEST(Npy, UsesVersion2ForHugeHeaders) {
  std::vector<int64_t> shape(30000, 1);
  float value = 2.5f;
  std::vector<uint8_t> encoded = encodeNpy(DType::F32, shape, &value);
  EXPECT_EQ(encoded[6], 2);
  StatusOr<HostTensor> tensor = parseNpy(encoded.data(), encoded.size());
  ASSERT_EQ(messageOf(tensor), "<ok>");
  EXPECT_EQ(tensor->shape, shape);
}

TEST(Npy, WritesBFloat16AsFloat32) {
  uint16_t values[] = {0x3fc0, 0xc000}; // 1.5, -2
  std::vector<uint8_t> encoded = encodeNpy(DType::BF16, {2}, values);
  StatusOr<HostTensor> tensor = parseNpy(encoded.data(), encoded.size());
  ASSERT_EQ(messageOf(tensor), "<ok>");
  EXPECT_EQ(tensor->dtype, DType::F32);
  float read[2];
  std::memcpy(read, tensor->data.data(), 8);
  EXPECT_EQ(read[0], 1.5f);
  EXPECT_EQ(read[1], -2.0f);
}

TEST(Npy, ReadsBFloat16AsMlDtypesSavesIt) {
  // ml_dtypes' bfloat16 has no numpy type code: np.save writes '<V2'.
  for (const char *descr : {"<V2", "|V2"}) {
    std::vector<uint8_t> bytes =
        npyBytes(std::string("{'descr': '") + descr +
                     "', 'fortran_order': False, 'shape': (2,), }",
                 {0xc0, 0x3f, 0x00, 0xc0});
    StatusOr<HostTensor> tensor = parseNpy(bytes.data(), bytes.size());
    ASSERT_EQ(messageOf(tensor), "<ok>");
    EXPECT_EQ(tensor->dtype, DType::BF16);
    EXPECT_EQ(elementAsDouble(DType::BF16, tensor->data.data(), 0), 1.5);
    EXPECT_EQ(elementAsDouble(DType::BF16, tensor->data.data(), 1), -2.0);
  }
  // Other void widths are not bf16.
  EXPECT_NE(parseError(npyBytes("{'descr': '<V4', 'fortran_order': False, "
                                "'shape': (1,), }",
                                {0, 0, 0, 0})),
            "<ok>");
}

TEST(Npy, RejectsFortranOrder) {
  EXPECT_EQ(parseError(npyBytes("{'descr': '<f4', 'fortran_order': True, "
                                "'shape': (1,), }",
                                {0, 0, 0, 0})),
            "fortran_order arrays are not supported; save the array in C "
            "order");
}

TEST(Npy, RejectsBigEndian) {
  EXPECT_EQ(parseError(npyBytes("{'descr': '>f4', 'fortran_order': False, "
                                "'shape': (1,), }",
                                {0, 0, 0, 0})),
            "big-endian data ('>f4') is not supported; save it little-endian");
}

TEST(Npy, RejectsUnsupportedDTypes) {
  EXPECT_EQ(parseError(npyBytes("{'descr': '<f8', 'fortran_order': False, "
                                "'shape': (1,), }",
                                std::vector<uint8_t>(8))),
            "unsupported dtype '<f8'; expected one of '<f4', '<f2', '<V2' "
            "(bf16, as ml_dtypes saves it), '<i4', '<i8'");
  EXPECT_EQ(parseError(npyBytes("{'descr': '|u1', 'fortran_order': False, "
                                "'shape': (1,), }",
                                {0})),
            "unsupported dtype '|u1'; expected one of '<f4', '<f2', '<V2' "
            "(bf16, as ml_dtypes saves it), '<i4', '<i8'");
}

TEST(Npy, RejectsTruncatedData) {
  EXPECT_EQ(parseError(npyBytes("{'descr': '<i4', 'fortran_order': False, "
                                "'shape': (2, 2), }",
                                std::vector<uint8_t>(10))),
            "truncated data: [2, 2] i32 needs 16 bytes, the file has 10");
}

TEST(Npy, RejectsTrailingBytes) {
  EXPECT_EQ(parseError(npyBytes("{'descr': '<i4', 'fortran_order': False, "
                                "'shape': (1,), }",
                                std::vector<uint8_t>(6))),
            "2 unexpected bytes after the [1] i32 data");
}

TEST(Npy, RejectsTruncatedHeader) {
  std::vector<uint8_t> bytes =
      npyBytes("{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }", {});
  bytes.resize(40);
  EXPECT_EQ(parseError(bytes), "truncated .npy header: it claims 118 bytes, "
                               "the file has 30 after the length");
}

TEST(Npy, RejectsOtherFilesAndVersions) {
  EXPECT_EQ(parseError({'P', 'K', 3, 4, 0, 0, 0, 0, 0, 0}),
            "not a .npy file (no \\x93NUMPY magic)");
  EXPECT_EQ(parseError({}), "not a .npy file (no \\x93NUMPY magic)");
  std::vector<uint8_t> bytes =
      npyBytes("{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }",
               {0, 0, 0, 0});
  bytes[6] = 3;
  EXPECT_EQ(parseError(bytes), "unsupported .npy version 3.0; expected 1.0 "
                               "or 2.0");
}

TEST(Npy, RejectsMalformedHeaders) {
  EXPECT_EQ(
      parseError(npyBytes("{'descr': '<i4', 'shape': (1,), }", {0, 0, 0, 0})),
      "malformed .npy header: missing key 'fortran_order'");
  EXPECT_EQ(parseError(npyBytes("{'descr': '<i4', 'fortran_order': False, "
                                "'shape': (1, -2), }",
                                {0, 0, 0, 0})),
            "malformed .npy header: expected a dimension in 'shape'");
  EXPECT_EQ(parseError(npyBytes("{'descr': '<i4', 'fortran_order': False, "
                                "'shape': (1,), 'extra': 1}",
                                {0, 0, 0, 0})),
            "malformed .npy header: unexpected key 'extra'");
  EXPECT_EQ(parseError(npyBytes("['descr']", {})),
            "malformed .npy header: expected '{'");
}

TEST(Npy, NamesTheFileInErrors) {
  TempDir dir;
  writeBytes(dir.file("bad.npy"), {1, 2, 3});
  EXPECT_EQ(messageOf(readNpy(dir.file("bad.npy"))),
            dir.file("bad.npy") + ": not a .npy file (no \\x93NUMPY magic)");
  EXPECT_EQ(messageOf(readNpy(dir.file("none.npy"))),
            "cannot open '" + dir.file("none.npy") +
                "': No such file or directory");
  EXPECT_EQ(messageOf(writeNpy(dir.file("no/such/dir.npy"), DType::F32, {},
                               "\0\0\0\0")),
            "cannot write '" + dir.file("no/such/dir.npy") +
                "': No such file or directory");
}

// No corruption or truncation of a valid file crashes the parser (the
// AddressSanitizer build checks that nothing reads out of bounds).
TEST(Npy, SurvivesEveryByteFlipAndTruncation) {
  std::vector<int64_t> shape = {3, 5};
  std::vector<int32_t> values(15, 7);
  std::vector<uint8_t> original = encodeNpy(DType::I32, shape, values.data());
  size_t parsed = 0;
  for (size_t i = 0; i < original.size(); ++i) {
    std::vector<uint8_t> bytes = original;
    bytes[i] ^= 0xff;
    StatusOr<HostTensor> tensor = parseNpy(bytes.data(), bytes.size());
    if (tensor.ok()) {
      ++parsed;
      EXPECT_EQ(*byteSize(tensor->dtype, tensor->shape), tensor->data.size());
    } else {
      EXPECT_FALSE(tensor.getStatus().getMessage().empty());
    }
    EXPECT_FALSE(parseNpy(original.data(), i).ok()) << "prefix " << i;
  }
  // Flips in the padding and the data still parse.
  EXPECT_GT(parsed, 60u);
}

} // namespace
