//===- TensorTest.cpp - element types and conversions ---------------------===//

#include "support/Status.h"
#include "support/Tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace lcc::runtime;

namespace {

TEST(Tensor, FormatsShapesAndTypes) {
  EXPECT_EQ(formatShape({}), "[]");
  EXPECT_EQ(formatShape({1, 512}), "[1, 512]");
  EXPECT_EQ(formatType({1, 512}, DType::I32), "[1, 512] i32");
  EXPECT_EQ(formatType({2}, DType::BF16), "[2] bf16");
}

TEST(Tensor, BoundsSizes) {
  EXPECT_EQ(byteSize(DType::F32, {}), 4u);
  EXPECT_EQ(byteSize(DType::I64, {2, 3}), 48u);
  EXPECT_EQ(byteSize(DType::F16, {0, int64_t(1) << 62}), 0u);
  EXPECT_FALSE(byteSize(DType::F32, {-1}));
  EXPECT_FALSE(byteSize(DType::F32, {int64_t(1) << 62, int64_t(1) << 62}));
  EXPECT_FALSE(byteSize(DType::F32, {int64_t(1) << 39}));
  EXPECT_FALSE(byteSize(DType(9), {1}));
  EXPECT_FALSE(isValidDType(DType(-1)));
  // Products that wrap 64 bits are not small: [2^32, 2^32] used to count 0
  // elements, so a .npy of that shape parsed as 0 bytes.
  EXPECT_FALSE(elementCount({int64_t(1) << 32, int64_t(1) << 32}));
  EXPECT_FALSE(elementCount({int64_t(1) << 21, int64_t(1) << 21,
                             int64_t(1) << 22}));
  EXPECT_FALSE(byteSize(DType::F32, {int64_t(1) << 32, int64_t(1) << 32}));
  EXPECT_EQ(elementCount({int64_t(1) << 20, int64_t(1) << 20}),
            uint64_t(1) << 40);
}

TEST(Status, QuotesNamesSoThatMessagesStayOneLine) {
  EXPECT_EQ(lcc::runtime::quoted("layers.0.wq"), "'layers.0.wq'");
  EXPECT_EQ(lcc::runtime::quoted("a\nlcc-run: error: forged"),
            "'a\\nlcc-run: error: forged'");
  EXPECT_EQ(lcc::runtime::quoted(std::string("nul\0byte", 8)), "'nul\\x00byte'");
  EXPECT_EQ(lcc::runtime::quoted("it's \\"), "'it\\'s \\\\'");
  EXPECT_EQ(lcc::runtime::quoted("\x1b[31mred"), "'\\x1b[31mred'");
  EXPECT_EQ(lcc::runtime::quoted(std::string(300, 'x')), "'" + std::string(200, 'x') + "...'");
}

TEST(Tensor, ConvertsHalfExactlyAndRoundsToNearestEven) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00); // rounds up to infinity
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001); // least subnormal
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000); // tie to even: 0
  EXPECT_EQ(floatToHalf(std::ldexp(3.0f, -25)), 0x0002); // tie to even: 2
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00); // tie, even
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(3.0f, -11)), 0x3c02); // tie, even
  EXPECT_EQ(floatToHalf(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_TRUE(std::isnan(
      halfToFloat(floatToHalf(std::numeric_limits<float>::quiet_NaN()))));
  for (uint32_t bits = 0; bits < 0x7c00; ++bits)
    ASSERT_EQ(floatToHalf(halfToFloat(uint16_t(bits))), bits) << bits;
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(halfToFloat(0x8000), -0.0f);
}

TEST(Tensor, ConvertsBFloat16) {
  EXPECT_EQ(floatToBFloat16(1.5f), 0x3fc0);
  EXPECT_EQ(bfloat16ToFloat(0xc000), -2.0f);
  // 1 + 2^-8 is halfway between two bf16 values: ties to even (1.0).
  EXPECT_EQ(floatToBFloat16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(floatToBFloat16(1.0f + std::ldexp(3.0f, -8)), 0x3f82);
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(
      floatToBFloat16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(Tensor, ReadsElementsAsDoubles) {
  int64_t big[] = {-(int64_t(1) << 40)};
  EXPECT_EQ(elementAsDouble(DType::I64, big, 0), -std::ldexp(1.0, 40));
  uint16_t half[] = {0x0000, 0x3555};
  EXPECT_EQ(elementAsDouble(DType::F16, half, 1), double(halfToFloat(0x3555)));
}

} // namespace
