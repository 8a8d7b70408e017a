//===- SafetensorsTest.cpp - .safetensors reading and writing -------------===//

#include "formats/Safetensors.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

using namespace lcc;
using namespace lcc::runtime;
using namespace lcc::test;

namespace {

/// A .safetensors file with header `json` and `dataSize` data bytes.
std::vector<uint8_t> fileWith(const std::string &json, size_t dataSize) {
  std::vector<uint8_t> bytes;
  for (int i = 0; i < 8; ++i)
    bytes.push_back(uint8_t(uint64_t(json.size()) >> (8 * i)));
  bytes.insert(bytes.end(), json.begin(), json.end());
  for (size_t i = 0; i < dataSize; ++i)
    bytes.push_back(uint8_t(i));
  return bytes;
}

std::string openError(const TempDir &dir, const std::vector<uint8_t> &bytes) {
  writeBytes(dir.file("w.safetensors"), bytes);
  StatusOr<std::unique_ptr<SafetensorsReader>> reader =
      SafetensorsReader::open(dir.file("w.safetensors"));
  std::string prefix = dir.file("w.safetensors") + ": ";
  std::string message = messageOf(reader);
  return message.rfind(prefix, 0) == 0 ? message.substr(prefix.size())
                                       : message;
}

TEST(Safetensors, RoundTripsEveryDType) {
  TempDir dir;
  std::vector<NamedTensor> tensors;
  DType dtypes[] = {DType::F32, DType::F16, DType::BF16, DType::I32,
                    DType::I64};
  for (size_t i = 0; i < 5; ++i) {
    HostTensor tensor;
    tensor.dtype = dtypes[i];
    tensor.shape = {int64_t(i + 1), 2};
    tensor.data.resize(*byteSize(tensor.dtype, tensor.shape));
    for (size_t b = 0; b < tensor.data.size(); ++b)
      tensor.data[b] = uint8_t(b * 7 + i);
    tensors.push_back({"layer." + std::to_string(i) + ".w", tensor});
  }
  tensors.push_back({"scalar", {DType::F32, {}, {0, 0, 0x80, 0x3f}}});
  tensors.push_back({"empty \"quoted\"\n", {DType::I32, {0, 3}, {}}});
  ASSERT_EQ(messageOf(writeSafetensors(dir.file("w.safetensors"), tensors,
                                       {{"format", "pt"}})),
            "<ok>");
  std::vector<uint8_t> encoded = encodeSafetensors(tensors, {{"format", "pt"}});
  uint64_t headerSize = 0;
  for (int i = 0; i < 8; ++i)
    headerSize |= uint64_t(encoded[i]) << (8 * i);
  EXPECT_EQ(headerSize % 8, 0u); // the data section starts 8-byte aligned

  StatusOr<std::unique_ptr<SafetensorsReader>> reader =
      SafetensorsReader::open(dir.file("w.safetensors"));
  ASSERT_EQ(messageOf(reader), "<ok>");
  const SafetensorsHeader &header = (*reader)->getHeader();
  ASSERT_EQ(header.entries.size(), tensors.size());
  EXPECT_EQ(header.metadata.at("format"), "pt");
  for (size_t i = 0; i < tensors.size(); ++i) {
    EXPECT_EQ(header.entries[i].name, tensors[i].name);
    StatusOr<HostTensor> read = (*reader)->readTensor(tensors[i].name);
    ASSERT_EQ(messageOf(read), "<ok>");
    EXPECT_EQ(read->dtype, tensors[i].tensor.dtype);
    EXPECT_EQ(read->shape, tensors[i].tensor.shape);
    EXPECT_EQ(read->data, tensors[i].tensor.data);
  }
}

TEST(Safetensors, ParsesEscapesAndUnicodeNames) {
  StatusOr<SafetensorsHeader> header = parseSafetensorsHeader(
      " {\"caf\\u00e9\\t\\ud83d\\ude00\\/\" : {\"dtype\": \"I32\", "
      "\"shape\": [1], \"data_offsets\": [0, 4], \"extra\": [null, true, "
      "{\"x\": -1.5e3}]}, \"__metadata__\": {\"k\": \"v\"}} ",
      4);
  ASSERT_EQ(messageOf(header), "<ok>");
  ASSERT_EQ(header->entries.size(), 1u);
  EXPECT_EQ(header->entries[0].name, "caf\xc3\xa9\t\xf0\x9f\x98\x80/");
  EXPECT_EQ(header->metadata.at("k"), "v");
}

TEST(Safetensors, NamesAMissingTensor) {
  TempDir dir;
  ASSERT_TRUE(writeSafetensors(dir.file("w.safetensors"),
                               {{"a", {DType::F32, {1}, {0, 0, 0, 0}}}})
                  .ok());
  StatusOr<std::unique_ptr<SafetensorsReader>> reader =
      SafetensorsReader::open(dir.file("w.safetensors"));
  ASSERT_TRUE(reader.ok());
  StatusOr<HostTensor> missing = (*reader)->readTensor("layers.0.wq");
  EXPECT_EQ(messageOf(missing), "weights file '" + dir.file("w.safetensors") +
                                    "' has no tensor 'layers.0.wq'");
  EXPECT_EQ(missing.getStatus().getCode(), StatusCode::NotFound);
}

TEST(Safetensors, RejectsOffsetsBeyondTheData) {
  TempDir dir;
  EXPECT_EQ(openError(dir, fileWith("{\"a\":{\"dtype\":\"F32\",\"shape\":[4],"
                                    "\"data_offsets\":[0,16]}}",
                                    12)),
            "tensor 'a' has data_offsets [0, 16] beyond the 12 data bytes of "
            "the file");
}

// Two tensors on the same bytes would be two parameters that alias.
TEST(Safetensors, RejectsOverlappingTensors) {
  TempDir dir;
  EXPECT_EQ(openError(dir, fileWith("{\"a\":{\"dtype\":\"F32\",\"shape\":[4],"
                                    "\"data_offsets\":[0,16]},"
                                    "\"b\":{\"dtype\":\"F32\",\"shape\":[2],"
                                    "\"data_offsets\":[8,16]}}",
                                    16)),
            "tensors 'a' [0, 16) and 'b' [8, 16) overlap in the data section");
}

// Names are echoed quoted and escaped: a name cannot forge a second error
// line or print a NUL byte.
TEST(Safetensors, EscapesNamesInMessages) {
  TempDir dir;
  EXPECT_EQ(openError(dir, fileWith("{\"a\\nlcc-run: error: x\":{\"dtype\":"
                                    "\"F64\",\"shape\":[1],"
                                    "\"data_offsets\":[0,8]}}",
                                    8)),
            "tensor 'a\\nlcc-run: error: x' has unsupported dtype 'F64'; "
            "expected one of F32, F16, BF16, I32, I64");
  EXPECT_EQ(openError(dir, fileWith("{\"\\u0000\":{\"dtype\":\"F64\","
                                    "\"shape\":[1],\"data_offsets\":[0,8]}}",
                                    8)),
            "tensor '\\x00' has unsupported dtype 'F64'; expected one of "
            "F32, F16, BF16, I32, I64");
}

TEST(Safetensors, RejectsOffsetsThatDisagreeWithTheShape) {
  TempDir dir;
  EXPECT_EQ(openError(dir, fileWith("{\"a\":{\"dtype\":\"F16\",\"shape\":[2,3],"
                                    "\"data_offsets\":[0,8]}}",
                                    16)),
            "tensor 'a' of type [2, 3] f16 needs 12 bytes, its data_offsets "
            "[0, 8] hold 8");
  EXPECT_EQ(openError(dir, fileWith("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],"
                                    "\"data_offsets\":[8,4]}}",
                                    16)),
            "tensor 'a' has malformed 'data_offsets'; expected [begin, end] "
            "with begin <= end");
}

TEST(Safetensors, RejectsUnsupportedDTypes) {
  TempDir dir;
  EXPECT_EQ(openError(dir, fileWith("{\"a\":{\"dtype\":\"F64\",\"shape\":[1],"
                                    "\"data_offsets\":[0,8]}}",
                                    8)),
            "tensor 'a' has unsupported dtype 'F64'; expected one of F32, "
            "F16, BF16, I32, I64");
}

TEST(Safetensors, RejectsBadShapes) {
  TempDir dir;
  EXPECT_EQ(openError(dir, fileWith("{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],"
                                    "\"data_offsets\":[0,4]}}",
                                    4)),
            "tensor 'a' has a bad dimension '-1' in 'shape'");
  EXPECT_EQ(openError(dir, fileWith("{\"a\":{\"dtype\":\"F32\","
                                    "\"data_offsets\":[0,4]}}",
                                    4)),
            "tensor 'a' lacks 'shape'");
}

TEST(Safetensors, RejectsDuplicateNames) {
  TempDir dir;
  std::string entry = "{\"dtype\":\"I32\",\"shape\":[],\"data_offsets\":[0,4]}";
  EXPECT_EQ(
      openError(dir, fileWith("{\"a\":" + entry + ",\"a\":" + entry + "}", 4)),
      "tensor 'a' appears twice in the header");
}

TEST(Safetensors, RejectsMalformedJson) {
  TempDir dir;
  EXPECT_EQ(openError(dir, fileWith("{\"a\":{}", 0)),
            "malformed JSON header at byte 7: expected ',' or '}'");
  EXPECT_EQ(openError(dir, fileWith("{\"a\":[1,]}", 0)),
            "malformed JSON header at byte 8: unexpected character ']'");
  EXPECT_EQ(openError(dir, fileWith("{\"a", 0)),
            "malformed JSON header at byte 3: unterminated string");
  EXPECT_EQ(openError(dir, fileWith("[]", 0)),
            "the JSON header is not an object");
  EXPECT_EQ(
      openError(dir,
                fileWith(std::string(100, '[') + std::string(100, ']'), 0)),
      "malformed JSON header at byte 65: nesting deeper than 64");
  EXPECT_EQ(openError(dir, fileWith("{\"\\ud800\":1}", 0)),
            "malformed JSON header at byte 8: unpaired UTF-16 surrogate");
}

TEST(Safetensors, RejectsBadSizes) {
  TempDir dir;
  EXPECT_EQ(openError(dir, {1, 2, 3}),
            "file of 3 bytes is too small to be a .safetensors file");
  std::vector<uint8_t> bytes = fileWith("{}", 0);
  bytes[0] = 100;
  EXPECT_EQ(openError(dir, bytes),
            "header length 100 exceeds the 2 bytes after it");
  EXPECT_EQ(messageOf(SafetensorsReader::open(dir.file("none.safetensors"))),
            "cannot open '" + dir.file("none.safetensors") +
                "': No such file or directory");
}

// No corruption or truncation of a valid file crashes the reader, and every
// tensor it accepts lies inside the file.
TEST(Safetensors, SurvivesEveryByteFlipAndTruncation) {
  TempDir dir;
  std::vector<uint8_t> original = encodeSafetensors(
      {{"a", {DType::F32, {2}, std::vector<uint8_t>(8, 1)}},
       {"b\u00e9", {DType::I64, {1, 1}, std::vector<uint8_t>(8, 2)}}},
      {{"k", "v"}});
  std::string path = dir.file("w.safetensors");
  for (size_t i = 0; i < original.size(); ++i) {
    for (bool truncate : {false, true}) {
      std::vector<uint8_t> bytes = original;
      if (truncate)
        bytes.resize(i);
      else
        bytes[i] ^= 0xff;
      writeBytes(path, bytes);
      StatusOr<std::unique_ptr<SafetensorsReader>> reader =
          SafetensorsReader::open(path);
      if (!reader.ok()) {
        EXPECT_FALSE(reader.getStatus().getMessage().empty());
        continue;
      }
      EXPECT_FALSE(truncate) << "a prefix of " << i << " bytes opened";
      for (const SafetensorsEntry &entry : (*reader)->getHeader().entries) {
        StatusOr<HostTensor> tensor = (*reader)->readTensor(entry.name);
        ASSERT_TRUE(tensor.ok()) << messageOf(tensor);
        EXPECT_EQ(tensor->data.size(), entry.end - entry.begin);
      }
    }
  }
}

} // namespace
