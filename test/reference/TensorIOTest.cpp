//===- TensorIOTest.cpp - .npy, .safetensors, JSON and the PRNG -----------===//

#include "TensorIO.h"
#include "Json.h"
#include "TestUtil.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

using namespace lcc::reference;

namespace {

/// A fresh path under the temp folder (removed by the caller's test).
std::string tempPath(const std::string &name) {
  const char *dir = std::getenv("TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/lcc-reference-test-" +
         std::to_string(getpid()) + "-" + name;
}

/// Little-endian bytes of an integer.
std::string le(uint64_t value, int bytes) {
  std::string out;
  for (int i = 0; i < bytes; ++i)
    out += static_cast<char>((value >> (8 * i)) & 0xFF);
  return out;
}

/// A v1.0 .npy built by hand from the format description.
std::string handNpy(const std::string &dict, const std::string &data,
                    int major = 1) {
  std::string header = dict + "\n";
  std::string out = std::string("\x93NUMPY", 6) + static_cast<char>(major) +
                    '\0' + le(header.size(), major == 1 ? 2 : 4);
  return out + header + data;
}

//===----------------------------------------------------------------------===//
// .npy
//===----------------------------------------------------------------------===//

TEST(Npy, RoundTripsF32AndI32) {
  Tensor t({2, 3}, {0.5, -1.25, 3, 1e-3, -7, 65504});
  std::string path = tempPath("f32.npy");
  writeNpy(path, t);
  DType dtype;
  Tensor back = readNpy(path, &dtype);
  EXPECT_EQ(dtype, DType::F32);
  ASSERT_EQ(back.shape, t.shape);
  for (int64_t i = 0; i < t.size(); ++i) // exactly the float rounding
    EXPECT_EQ(back.data[i], static_cast<double>(static_cast<float>(t.data[i])));

  Tensor ids({1, 4}, {0, 255, -3, 2147483647});
  writeNpy(path, ids, DType::I32);
  expectTensorNear(readNpy(path, &dtype), ids, 0);
  EXPECT_EQ(dtype, DType::I32);
  std::remove(path.c_str());

  // 0-d and 1-d shapes.
  expectTensorNear(parseNpy(encodeNpy(Tensor({}, {2.5})), "0-d"),
                   Tensor({}, {2.5}), 0);
  expectTensorNear(parseNpy(encodeNpy(Tensor({3}, {1, 2, 3})), "1-d"),
                   Tensor({3}, {1, 2, 3}), 0);
}

TEST(Npy, RoundTripsHalfTypesRoundedToNearestEven) {
  // 1 + 2^-8 is a tie in bf16 (rounds to 1, even) and exact in f16;
  // 1 + 3 * 2^-8 rounds up to 1 + 2^-6 in bf16; 65520 overflows f16.
  Tensor t({5}, {1 + std::ldexp(1.0, -8), 1 + 3 * std::ldexp(1.0, -8), -2.5,
                 1e-6, 65520});
  std::string path = tempPath("half.npy");
  DType dtype;
  writeNpy(path, t, DType::BF16);
  Tensor bf16 = readNpy(path, &dtype);
  EXPECT_EQ(dtype, DType::BF16);
  EXPECT_EQ(bf16.data[0], 1.0);
  EXPECT_EQ(bf16.data[1], 1 + std::ldexp(1.0, -6));
  EXPECT_EQ(bf16.data[2], -2.5);
  EXPECT_NEAR(bf16.data[3], 1e-6, 1e-6 * std::ldexp(1.0, -8));
  EXPECT_EQ(bf16.data[4], 65536);
  writeNpy(path, t, DType::F16);
  Tensor f16 = readNpy(path, &dtype);
  EXPECT_EQ(dtype, DType::F16);
  EXPECT_EQ(f16.data[0], 1 + std::ldexp(1.0, -8));
  EXPECT_EQ(f16.data[1], 1 + 3 * std::ldexp(1.0, -8));
  EXPECT_EQ(f16.data[2], -2.5);
  EXPECT_EQ(f16.data[3], std::ldexp(17.0, -24)); // subnormal: 16.78 -> 17
  EXPECT_TRUE(std::isinf(f16.data[4]));
  std::remove(path.c_str());
}

TEST(Npy, WritesTheStandardHeader) {
  std::string bytes = encodeNpy(Tensor({2, 3}));
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  size_t headerLength = static_cast<unsigned char>(bytes[8]) |
                        static_cast<unsigned char>(bytes[9]) << 8;
  EXPECT_EQ((10 + headerLength) % 64, 0u); // data is 64-byte aligned
  EXPECT_EQ(bytes.size(), 10 + headerLength + 6 * 4);
  std::string header = bytes.substr(10, headerLength);
  EXPECT_EQ(header.back(), '\n');
  EXPECT_EQ(header.rfind("{'descr': '<f4', 'fortran_order': False, "
                         "'shape': (2, 3), }",
                         0),
            0u);
  EXPECT_NE(encodeNpy(Tensor({5}), DType::I32).find("'<i4'"),
            std::string::npos);
  EXPECT_NE(encodeNpy(Tensor({5})).find("'shape': (5,)"), std::string::npos);
  EXPECT_NE(encodeNpy(Tensor()).find("'shape': ()"), std::string::npos);
  EXPECT_NE(errorOf([] { encodeNpy(Tensor({1}, {0.5}), DType::I32); }), "");
}

TEST(Npy, ReadsHandMadeFiles) {
  // int64 [3] = -1, 0, 7 (what NumPy writes for np.array([-1, 0, 7])).
  Tensor i64 = parseNpy(handNpy("{'descr': '<i8', 'fortran_order': False, "
                                "'shape': (3,), }",
                                le(uint64_t(-1), 8) + le(0, 8) + le(7, 8)),
                        "i8");
  expectTensorNear(i64, Tensor({3}, {-1, 0, 7}), 0);

  // float64 [1, 1] = 0.1, version 2.0 header (4-byte length).
  double tenth = 0.1;
  uint64_t bits;
  std::memcpy(&bits, &tenth, 8);
  Tensor f64 = parseNpy(handNpy("{'descr': '<f8', 'fortran_order': False, "
                                "'shape': (1, 1), }",
                                le(bits, 8), 2),
                        "f8");
  expectTensorNear(f64, Tensor({1, 1}, {0.1}), 0);

  // float32 [2] = 1.0 (0x3F800000), -2.0 (0xC0000000); keys in any order.
  Tensor f32 = parseNpy(handNpy("{'shape': (2,), 'fortran_order': False, "
                                "'descr': '<f4'}",
                                le(0x3F800000, 4) + le(0xC0000000, 4)),
                        "f4");
  expectTensorNear(f32, Tensor({2}, {1, -2}), 0);
}

TEST(Npy, RejectsBadFiles) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, "
                     "'shape': (2,), }";
  std::string data = le(0, 4) + le(0, 4);
  EXPECT_EQ(errorOf([&] { parseNpy(handNpy(dict, data), "ok"); }), "");
  EXPECT_NE(
      errorOf([&] { parseNpy("NUMPY" + data, "magic"); }).find("bad magic"),
      std::string::npos);
  EXPECT_NE(errorOf([&] { parseNpy(handNpy(dict, data.substr(0, 5)), "t"); }),
            "");
  EXPECT_NE(errorOf([&] { parseNpy(handNpy(dict, data + "x"), "long"); }), "");
  std::string fortran = "{'descr': '<f4', 'fortran_order': True, "
                        "'shape': (2,), }";
  EXPECT_NE(
      errorOf([&] { parseNpy(handNpy(fortran, data), "f"); }).find("Fortran"),
      std::string::npos);
  std::string big = "{'descr': '>f4', 'fortran_order': False, "
                    "'shape': (2,), }";
  EXPECT_NE(errorOf([&] {
              parseNpy(handNpy(big, data), "be");
            }).find("unsupported .npy dtype '>f4'"),
            std::string::npos);
  std::string huge = "{'descr': '<f4', 'fortran_order': False, "
                     "'shape': (4611686018427387904, 4), }";
  EXPECT_NE(errorOf([&] { parseNpy(handNpy(huge, data), "huge"); }), "");
  EXPECT_NE(
      errorOf([] { readNpy("/nonexistent/x.npy"); }).find("/nonexistent/x.npy"),
      std::string::npos);
}

//===----------------------------------------------------------------------===//
// .safetensors
//===----------------------------------------------------------------------===//

TEST(Safetensors, RoundTrips) {
  std::map<std::string, Tensor> tensors;
  tensors["layers.0.attn.wq"] = Tensor({2, 2}, {1, -0.5, 0.25, 8});
  tensors["ids"] = Tensor({3}, {1, -2, 3});
  tensors["scalar"] = Tensor({}, {4});
  std::string path = tempPath("w.safetensors");
  writeSafetensors(path, tensors, {{"ids", DType::I32}});
  std::map<std::string, DType> dtypes;
  std::map<std::string, Tensor> back = readSafetensors(path, &dtypes);
  std::remove(path.c_str());
  ASSERT_EQ(back.size(), 3u);
  for (const auto &[name, t] : tensors)
    expectTensorNear(back.at(name), t, 0);
  EXPECT_EQ(dtypes.at("ids"), DType::I32);
  EXPECT_EQ(dtypes.at("scalar"), DType::F32);

  // The data starts 8-byte aligned.
  std::string bytes = encodeSafetensors(tensors);
  uint64_t headerLength = 0;
  for (int i = 7; i >= 0; --i)
    headerLength = headerLength << 8 | static_cast<unsigned char>(bytes[i]);
  EXPECT_EQ(headerLength % 8, 0u);
}

TEST(Safetensors, ReadsHandMadeFiles) {
  // F16 1.5 = 0x3E00, BF16 -2 = 0xC000, I64 -5, F64 0.25, plus metadata.
  std::string header =
      R"({"__metadata__":{"format":"pt"},)"
      R"("h":{"dtype":"F16","shape":[1],"data_offsets":[0,2]},)"
      R"("b":{"dtype":"BF16","shape":[1],"data_offsets":[2,4]},)"
      R"("i":{"dtype":"I64","shape":[1,1],"data_offsets":[4,12]},)"
      R"("d":{"dtype":"F64","shape":[],"data_offsets":[12,20]}})";
  double quarter = 0.25;
  uint64_t bits;
  std::memcpy(&bits, &quarter, 8);
  std::string data =
      le(0x3E00, 2) + le(0xC000, 2) + le(uint64_t(-5), 8) + le(bits, 8);
  auto t = parseSafetensors(le(header.size(), 8) + header + data, "hand");
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t.at("h").data[0], 1.5);
  EXPECT_EQ(t.at("b").data[0], -2.0);
  EXPECT_EQ(t.at("i").data[0], -5.0);
  EXPECT_EQ(t.at("i").shape, (Shape{1, 1}));
  EXPECT_EQ(t.at("d").data[0], 0.25);
  EXPECT_EQ(t.at("d").rank(), 0);
}

TEST(Safetensors, RejectsBadFiles) {
  auto file = [](const std::string &header, const std::string &data) {
    return le(header.size(), 8) + header + data;
  };
  std::string data(8, '\0');
  auto error = [&](const std::string &header) {
    return errorOf([&] { parseSafetensors(file(header, data), "f"); });
  };
  EXPECT_EQ(error(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})"),
            "");
  EXPECT_NE(error(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,16]}})")
                .find("outside"),
            std::string::npos);
  EXPECT_NE(error(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})"),
            "");
  EXPECT_NE(error(R"({"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]}})")
                .find("unsupported dtype"),
            std::string::npos);
  EXPECT_NE(error(R"({"a":{"dtype":"F32","shape":[2]}})"), "");
  EXPECT_NE(error(R"({"a":1,"a":2})").find("duplicate"), std::string::npos);
  EXPECT_NE(error(R"({"a":{"dtype":"F32","shape":[-2],)"
                  R"("data_offsets":[0,8]}})"),
            "");
  EXPECT_NE(error("[1, 2"), "");
  EXPECT_NE(errorOf([] {
              parseSafetensors(le(1000, 8) + "{}", "len");
            }).find("exceeds the file"),
            std::string::npos);
  EXPECT_NE(errorOf([] { parseSafetensors("abc", "short"); }), "");
}

TEST(Json, ParsesTheSubsetSafetensorsUses) {
  JsonValue v = parseJson(
      R"( {"a\"b": [1, -2.5e3, true, false, null], "u": "\u00e9\ud83d\ude00",)"
      R"( "o": {}} )");
  ASSERT_EQ(v.kind, JsonValue::Kind::Object);
  const JsonValue *a = v.find("a\"b");
  ASSERT_TRUE(a);
  ASSERT_EQ(a->elements.size(), 5u);
  EXPECT_EQ(a->elements[0].asUInt64("x"), 1u);
  EXPECT_EQ(a->elements[1].text, "-2.5e3");
  EXPECT_NE(errorOf([&] { a->elements[1].asUInt64("x"); }), "");
  EXPECT_TRUE(a->elements[2].boolean);
  EXPECT_EQ(a->elements[4].kind, JsonValue::Kind::Null);
  EXPECT_EQ(v.find("u")->text, "\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_EQ(v.find("o")->kind, JsonValue::Kind::Object);
  EXPECT_EQ(parseJson("18446744073709551615").asUInt64("max"),
            18446744073709551615ull);
  EXPECT_NE(errorOf([] { parseJson("18446744073709551616").asUInt64("x"); }),
            "");
  EXPECT_NE(errorOf([] { parseJson("{} x"); }), "");
  EXPECT_NE(errorOf([] { parseJson(std::string(1000, '[')); }), "");
  EXPECT_EQ(parseJson(jsonQuote("q\"\\\n")).text, "q\"\\\n");
}

//===----------------------------------------------------------------------===//
// The documented PRNG
//===----------------------------------------------------------------------===//

TEST(Random, IsSplitMix64) {
  // Published splitmix64 outputs for seed 0.
  SplitMix64 rng(0);
  EXPECT_EQ(rng.nextU64(), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(rng.nextU64(), 0x6E789E6AA1B965F4ull);
  EXPECT_EQ(rng.nextU64(), 0x06C45D188009454Full);
}

TEST(Random, DistributionsLookRight) {
  SplitMix64 rng(42);
  const int n = 200000;
  double sum = 0, sumSq = 0;
  for (int i = 0; i < n; ++i) {
    double x = rng.normal();
    sum += x;
    sumSq += x * x;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(sumSq / n, 1.0, 0.02);
  for (int i = 0; i < 1000; ++i) {
    int64_t k = rng.integer(-2, 3);
    EXPECT_GE(k, -2);
    EXPECT_LT(k, 3);
    double u = rng.uniform(1, 2);
    EXPECT_GE(u, 1);
    EXPECT_LT(u, 2);
  }
}

} // namespace
