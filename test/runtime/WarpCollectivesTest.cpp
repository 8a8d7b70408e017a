//===- WarpCollectivesTest.cpp - the emulator's warp collectives ----------===//
//
// shfl.sync, vote.sync and mma.sync m16n8k16 as the CUDA emulator computes
// them, on registers built here, against values worked out from the PTX
// ISA's definitions: shuffles within segments and at their clamps, votes
// over a member mask, and the matrix product of fragments laid out as the
// ISA's figures lay them out (written here in the ISA's own case-by-case
// words, not the emulator's formula).
//
//===----------------------------------------------------------------------===//

#include "devices/cuda/WarpCollectives.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace lcc::runtime::cuda;
namespace emu = lcc::lcm::emulator;

namespace {

uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

float floatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

/// Every lane's `in` = {value of the lane, b, c}.
std::array<WarpLane, kWarpSize> shuffleLanes(float (*value)(uint32_t),
                                             uint32_t b, uint32_t c) {
  std::array<WarpLane, kWarpSize> lanes{};
  for (uint32_t lane = 0; lane < kWarpSize; ++lane)
    lanes[lane].in = {bitsOf(value(lane)), b, c};
  return lanes;
}

float tenTimesLane(uint32_t lane) { return 10.0f * float(lane); }

TEST(WarpCollectives, ButterflyShufflesSumTheWarp) {
  std::array<float, kWarpSize> sums{};
  for (uint32_t lane = 0; lane < kWarpSize; ++lane)
    sums[lane] = float(lane);
  // __shfl_xor_sync(~0u, v, offset): c = 31, no segments.
  for (uint32_t offset : {16u, 8u, 4u, 2u, 1u}) {
    std::array<WarpLane, kWarpSize> lanes{};
    for (uint32_t lane = 0; lane < kWarpSize; ++lane)
      lanes[lane].in = {bitsOf(sums[lane]), offset, 31};
    ASSERT_EQ(performWarpCollective(emu::kShuffleButterfly, ~0u, lanes), "");
    for (uint32_t lane = 0; lane < kWarpSize; ++lane) {
      EXPECT_EQ(lanes[lane].out[1], 1u);
      sums[lane] += floatOf(lanes[lane].out[0]);
    }
  }
  for (uint32_t lane = 0; lane < kWarpSize; ++lane)
    EXPECT_EQ(sums[lane], 496.0f) << lane;
}

TEST(WarpCollectives, IndexShuffleReadsWithinItsSegment) {
  // __shfl_sync(~0u, v, 3, 8): c = ((32 - 8) << 8) | 31.
  auto lanes = shuffleLanes(tenTimesLane, 3, (24u << 8) | 31);
  ASSERT_EQ(performWarpCollective(emu::kShuffleIndex, ~0u, lanes), "");
  for (uint32_t lane = 0; lane < kWarpSize; ++lane) {
    EXPECT_EQ(floatOf(lanes[lane].out[0]), 10.0f * float((lane / 8) * 8 + 3))
        << lane;
    EXPECT_EQ(lanes[lane].out[1], 1u);
  }
}

TEST(WarpCollectives, UpAndDownShufflesStopAtTheSegmentsEdge) {
  // __shfl_up_sync(~0u, v, 1, 16): c = (32 - 16) << 8 (up clamps at the
  // segment's first lane).
  auto up = shuffleLanes(tenTimesLane, 1, 16u << 8);
  ASSERT_EQ(performWarpCollective(emu::kShuffleUp, ~0u, up), "");
  // __shfl_down_sync(~0u, v, 2, 16): c = ((32 - 16) << 8) | 31.
  auto down = shuffleLanes(tenTimesLane, 2, (16u << 8) | 31);
  ASSERT_EQ(performWarpCollective(emu::kShuffleDown, ~0u, down), "");
  for (uint32_t lane = 0; lane < kWarpSize; ++lane) {
    bool first = lane % 16 == 0;
    EXPECT_EQ(floatOf(up[lane].out[0]), tenTimesLane(first ? lane : lane - 1));
    EXPECT_EQ(up[lane].out[1], first ? 0u : 1u) << lane;
    bool last2 = lane % 16 >= 14;
    EXPECT_EQ(floatOf(down[lane].out[0]),
              tenTimesLane(last2 ? lane : lane + 2));
    EXPECT_EQ(down[lane].out[1], last2 ? 0u : 1u) << lane;
  }
}

TEST(WarpCollectives, AShuffleFromALaneOutsideTheMaskIsUndefined) {
  auto lanes = shuffleLanes(tenTimesLane, 16, 31);
  EXPECT_EQ(performWarpCollective(emu::kShuffleButterfly, 0x0000ffffu, lanes),
            "shfl.sync of lane 0 reads lane 16, which is not in its member "
            "mask");
  // The stand-in is the lane's own value; lanes outside the mask are left.
  EXPECT_EQ(floatOf(lanes[3].out[0]), tenTimesLane(3));
  EXPECT_EQ(lanes[20].out[0], 0u);
}

TEST(WarpCollectives, VotesCountTheLanesOfTheMask) {
  auto vote = [](emu::WarpOperation operation, uint32_t mask,
                 bool (*predicate)(uint32_t)) {
    std::array<WarpLane, kWarpSize> lanes{};
    for (uint32_t lane = 0; lane < kWarpSize; ++lane)
      lanes[lane].in[0] = predicate(lane);
    EXPECT_EQ(performWarpCollective(operation, mask, lanes), "");
    return lanes[0].out[0];
  };
  auto belowFive = [](uint32_t lane) { return lane < 5; };
  auto always = [](uint32_t) { return true; };
  auto never = [](uint32_t) { return false; };
  // Lanes 0-7 vote; lanes 5-31 would say no, but only 5-7 are asked.
  EXPECT_EQ(vote(emu::kVoteBallot, 0xffu, belowFive), 0x1fu);
  EXPECT_EQ(vote(emu::kVoteAll, 0xffu, belowFive), 0u);
  EXPECT_EQ(vote(emu::kVoteAny, 0xffu, belowFive), 1u);
  EXPECT_EQ(vote(emu::kVoteUniform, 0xffu, belowFive), 0u);
  EXPECT_EQ(vote(emu::kVoteAll, 0x1fu, belowFive), 1u);
  EXPECT_EQ(vote(emu::kVoteBallot, ~0u, always), ~0u);
  EXPECT_EQ(vote(emu::kVoteUniform, ~0u, always), 1u);
  EXPECT_EQ(vote(emu::kVoteUniform, ~0u, never), 1u);
  EXPECT_EQ(vote(emu::kVoteAny, ~0u, never), 0u);
}

/// A 16 x 16 times 16 x 8 plus 16 x 8 of small integers, exact in bf16, f16
/// and f32, and the registers of each lane that hold them.
struct MmaCase {
  int a[16][16], b[16][8], c[16][8];

  MmaCase() {
    for (int r = 0; r < 16; ++r)
      for (int k = 0; k < 16; ++k)
        a[r][k] = (r * 3 + k) % 5 - 2;
    for (int k = 0; k < 16; ++k)
      for (int n = 0; n < 8; ++n)
        b[k][n] = (k + 2 * n) % 7 - 3;
    for (int r = 0; r < 16; ++r)
      for (int n = 0; n < 8; ++n)
        c[r][n] = r - n;
  }

  int d(int r, int n) const {
    int sum = c[r][n];
    for (int k = 0; k < 16; ++k)
      sum += a[r][k] * b[k][n];
    return sum;
  }

  // The PTX ISA's fragment layout for mma.m16n8k16 with .bf16/.f16 A and B
  // and .f32 C/D, case by case as the ISA states it.
  static int aRow(uint32_t lane, int i) {
    int groupID = int(lane) >> 2;
    bool upper = (i >= 2 && i < 4) || i >= 6;
    return upper ? groupID + 8 : groupID;
  }
  static int aCol(uint32_t lane, int i) {
    int threadIDInGroup = int(lane) % 4;
    int col = threadIDInGroup * 2 + (i & 0x1);
    return i < 4 ? col : col + 8;
  }
  static int bRow(uint32_t lane, int i) {
    int threadIDInGroup = int(lane) % 4;
    int row = threadIDInGroup * 2 + (i & 0x1);
    return i < 2 ? row : row + 8;
  }
  static int bCol(uint32_t lane) { return int(lane) >> 2; }
  static int cRow(uint32_t lane, int i) {
    int groupID = int(lane) >> 2;
    return i < 2 ? groupID : groupID + 8;
  }
  static int cCol(uint32_t lane, int i) {
    return int(lane) % 4 * 2 + (i & 0x1);
  }

  /// The lanes' registers, 16-bit values encoded by `encode`.
  std::array<WarpLane, kWarpSize> lanes(uint16_t (*encode)(int)) const {
    std::array<WarpLane, kWarpSize> lanes{};
    for (uint32_t lane = 0; lane < kWarpSize; ++lane) {
      auto &in = lanes[lane].in;
      for (int i = 0; i < 8; ++i)
        in[i / 2] |= uint32_t(encode(a[aRow(lane, i)][aCol(lane, i)]))
                     << (16 * (i % 2));
      for (int i = 0; i < 4; ++i)
        in[4 + i / 2] |= uint32_t(encode(b[bRow(lane, i)][bCol(lane)]))
                         << (16 * (i % 2));
      for (int i = 0; i < 4; ++i)
        in[6 + i] = bitsOf(float(c[cRow(lane, i)][cCol(lane, i)]));
    }
    return lanes;
  }

  void expectProduct(const std::array<WarpLane, kWarpSize> &lanes) const {
    for (uint32_t lane = 0; lane < kWarpSize; ++lane)
      for (int i = 0; i < 4; ++i)
        EXPECT_EQ(floatOf(lanes[lane].out[i]),
                  float(d(cRow(lane, i), cCol(lane, i))))
            << "lane " << lane << " d" << i;
    // Worked by hand: D[0][0] = sum_k a[0][k] b[k][0] + 0 = -1, D[0][1] = 8,
    // D[15][7] = 7 (lane 0's d0 and d1, lane 31's d3).
    EXPECT_EQ(floatOf(lanes[0].out[0]), -1.0f);
    EXPECT_EQ(floatOf(lanes[0].out[1]), 8.0f);
    EXPECT_EQ(floatOf(lanes[31].out[3]), 7.0f);
  }
};

/// bf16 of a small integer: the top half of its float.
uint16_t bf16Of(int value) { return uint16_t(bitsOf(float(value)) >> 16); }

/// IEEE half of a small integer: sign, exponent (bias 15), 10 bits of
/// mantissa.
uint16_t halfOf(int value) {
  if (value == 0)
    return 0;
  uint16_t sign = value < 0 ? 0x8000 : 0;
  int magnitude = std::abs(value);
  int exponent = 0;
  while ((magnitude >> (exponent + 1)) != 0)
    ++exponent;
  auto mantissa = uint16_t((magnitude << (10 - exponent)) & 0x3ff);
  return uint16_t(sign | ((exponent + 15) << 10) | mantissa);
}

TEST(WarpCollectives, HalfPrecisionDecodesAsTheStandardSays) {
  EXPECT_EQ(halfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(halfToFloat(0xc000), -2.0f);
  EXPECT_EQ(halfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isinf(halfToFloat(0x7c00)));
  EXPECT_TRUE(std::isnan(halfToFloat(0x7e00)));
  EXPECT_EQ(bf16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(bf16ToFloat(0xc040), -3.0f);
  EXPECT_EQ(halfOf(3), 0x4200);
  EXPECT_EQ(halfOf(-1), 0xbc00);
}

TEST(WarpCollectives, MmaBF16IsTheMatrixProductOfItsFragments) {
  MmaCase mma;
  auto lanes = mma.lanes(bf16Of);
  ASSERT_EQ(performWarpCollective(emu::kMmaM16N8K16BF16, ~0u, lanes), "");
  mma.expectProduct(lanes);
}

TEST(WarpCollectives, MmaF16IsTheMatrixProductOfItsFragments) {
  MmaCase mma;
  auto lanes = mma.lanes(halfOf);
  ASSERT_EQ(performWarpCollective(emu::kMmaM16N8K16F16, ~0u, lanes), "");
  mma.expectProduct(lanes);
}

TEST(WarpCollectives, MmaTF32IsTheMatrixProductOfItsFragments) {
  // m16n8k8 with tf32 A (16 x 8) and B (8 x 8), one value a register, laid
  // out as the PTX ISA states it: a0 (g, t), a1 (g + 8, t), a2 (g, t + 4),
  // a3 (g + 8, t + 4); b0 (t, g), b1 (t + 4, g); C and D as m16n8k16's.
  int a[16][8], b[8][8], c[16][8];
  for (int r = 0; r < 16; ++r)
    for (int k = 0; k < 8; ++k)
      a[r][k] = (r * 5 + k) % 7 - 3;
  for (int k = 0; k < 8; ++k)
    for (int n = 0; n < 8; ++n)
      b[k][n] = (3 * k + n) % 5 - 2;
  for (int r = 0; r < 16; ++r)
    for (int n = 0; n < 8; ++n)
      c[r][n] = r + n;
  std::array<WarpLane, kWarpSize> lanes{};
  for (uint32_t lane = 0; lane < kWarpSize; ++lane) {
    int g = int(lane) / 4, t = int(lane) % 4;
    auto &in = lanes[lane].in;
    in[0] = bitsOf(float(a[g][t]));
    in[1] = bitsOf(float(a[g + 8][t]));
    in[2] = bitsOf(float(a[g][t + 4]));
    in[3] = bitsOf(float(a[g + 8][t + 4]));
    in[4] = bitsOf(float(b[t][g]));
    in[5] = bitsOf(float(b[t + 4][g]));
    for (int i = 0; i < 4; ++i)
      in[6 + i] = bitsOf(float(c[MmaCase::cRow(lane, i)][MmaCase::cCol(lane, i)]));
  }
  ASSERT_EQ(performWarpCollective(emu::kMmaM16N8K8TF32, ~0u, lanes), "");
  for (uint32_t lane = 0; lane < kWarpSize; ++lane)
    for (int i = 0; i < 4; ++i) {
      int row = MmaCase::cRow(lane, i), col = MmaCase::cCol(lane, i);
      int sum = c[row][col];
      for (int k = 0; k < 8; ++k)
        sum += a[row][k] * b[k][col];
      EXPECT_EQ(floatOf(lanes[lane].out[i]), float(sum)) << lane << " " << i;
    }
}

TEST(WarpCollectives, MmaTF32IgnoresTheLow13BitsOfItsOperands) {
  // 1 + 2^-20 is 1 in tf32 (10 bits of mantissa): A = that, B = 1, C = 0
  // gives 8 in each element, not 8 + 2^-17.
  std::array<WarpLane, kWarpSize> lanes{};
  for (WarpLane &lane : lanes) {
    for (int r = 0; r < 4; ++r)
      lane.in[r] = bitsOf(1.0f + std::ldexp(1.0f, -20));
    lane.in[4] = lane.in[5] = bitsOf(1.0f);
  }
  ASSERT_EQ(performWarpCollective(emu::kMmaM16N8K8TF32, ~0u, lanes), "");
  EXPECT_EQ(floatOf(lanes[9].out[3]), 8.0f);
}

TEST(WarpCollectives, MmaRoundsItsExactSumOnce) {
  // 1 + 2^-24 * 16 terms: each product 2^-24 is lost when added to 1 in
  // f32 one at a time, but their exact sum, 2^-20, is kept.
  std::array<WarpLane, kWarpSize> lanes{};
  uint16_t tiny = uint16_t(bitsOf(std::ldexp(1.0f, -12)) >> 16);
  for (uint32_t lane = 0; lane < kWarpSize; ++lane) {
    auto &in = lanes[lane].in;
    for (int r = 0; r < 6; ++r)
      in[r] = uint32_t(tiny) | uint32_t(tiny) << 16;
    for (int i = 0; i < 4; ++i)
      in[6 + i] = bitsOf(1.0f);
  }
  ASSERT_EQ(performWarpCollective(emu::kMmaM16N8K16BF16, ~0u, lanes), "");
  EXPECT_EQ(floatOf(lanes[5].out[2]), 1.0f + std::ldexp(1.0f, -20));
}

TEST(WarpCollectives, MmaOfPartOfTheWarpIsUndefined) {
  MmaCase mma;
  auto lanes = mma.lanes(bf16Of);
  EXPECT_EQ(performWarpCollective(emu::kMmaM16N8K16BF16, 0x0000ffffu, lanes),
            "mma.sync with member mask 0x0000ffff: it is a collective of all "
            "32 lanes");
  EXPECT_EQ(lanes[0].out[0], 0u);
}

/// The lanes' in words for ldmatrix: lane l gives `rows[l]`.
std::array<WarpLane, kWarpSize> rowAddresses(const uint16_t *const *rows,
                                             unsigned count) {
  std::array<WarpLane, kWarpSize> lanes{};
  for (unsigned lane = 0; lane < count; ++lane) {
    auto address = uint64_t(reinterpret_cast<uintptr_t>(rows[lane]));
    lanes[lane].in[0] = uint32_t(address);
    lanes[lane].in[1] = uint32_t(address >> 32);
  }
  return lanes;
}

RowReader direct() {
  return [](uint32_t, const uint8_t *address) { return address; };
}

TEST(WarpCollectives, LdMatrixGivesEachLaneTwoValuesOfARow) {
  // Four 8 x 8 matrices, value = 1000 m + 10 r + c.
  alignas(16) uint16_t matrices[4][8][8];
  const uint16_t *rows[32];
  for (int m = 0; m < 4; ++m)
    for (int r = 0; r < 8; ++r) {
      for (int c = 0; c < 8; ++c)
        matrices[m][r][c] = uint16_t(1000 * m + 10 * r + c);
      rows[8 * m + r] = matrices[m][r];
    }
  auto plain = rowAddresses(rows, 32);
  ASSERT_EQ(performWarpCollective(emu::kLdMatrixX4, ~0u, plain, direct()), "");
  auto transposed = rowAddresses(rows, 32);
  ASSERT_EQ(performWarpCollective(emu::kLdMatrixX4Trans, ~0u, transposed,
                                  direct()),
            "");
  for (uint32_t lane = 0; lane < kWarpSize; ++lane)
    for (int m = 0; m < 4; ++m) {
      int row = int(lane) / 4, column = 2 * (int(lane) % 4);
      uint32_t expected = uint32_t(1000 * m + 10 * row + column) |
                          uint32_t(1000 * m + 10 * row + column + 1) << 16;
      EXPECT_EQ(plain[lane].out[m], expected) << lane << " " << m;
      // Transposed: column `row` of rows `column` and `column + 1`.
      uint32_t expectedT = uint32_t(1000 * m + 10 * column + row) |
                           uint32_t(1000 * m + 10 * (column + 1) + row) << 16;
      EXPECT_EQ(transposed[lane].out[m], expectedT) << lane << " " << m;
    }
  // .x1 reads lanes 0-7's rows only and fills one register.
  auto one = rowAddresses(rows, 8);
  ASSERT_EQ(performWarpCollective(emu::kLdMatrixX1, ~0u, one, direct()), "");
  EXPECT_EQ(one[5].out[0], plain[5].out[0]);
  EXPECT_EQ(one[5].out[1], 0u);
}

TEST(WarpCollectives, LdMatrixFragmentsAreTheMmaFragments) {
  // A (16 x 16) and B (16 x 8) row-major in memory, as a kernel stages them:
  // ldmatrix.x4 of A's four 8 x 8 quarters gives mma's a0-a7, and
  // ldmatrix.x2.trans of B's two 8 x 8 halves its b0-b3.
  MmaCase mma;
  alignas(16) uint16_t a[16][16], b[16][8];
  for (int r = 0; r < 16; ++r)
    for (int k = 0; k < 16; ++k)
      a[r][k] = bf16Of(mma.a[r][k]);
  for (int k = 0; k < 16; ++k)
    for (int n = 0; n < 8; ++n)
      b[k][n] = bf16Of(mma.b[k][n]);
  const uint16_t *aRows[32], *bRows[32];
  for (int lane = 0; lane < 32; ++lane) {
    int quarter = lane / 8, r = lane % 8;
    aRows[lane] = &a[r + 8 * (quarter % 2)][8 * (quarter / 2)];
    bRows[lane] = b[lane % 16];
  }
  auto aLanes = rowAddresses(aRows, 32);
  auto bLanes = rowAddresses(bRows, 16);
  ASSERT_EQ(performWarpCollective(emu::kLdMatrixX4, ~0u, aLanes, direct()), "");
  ASSERT_EQ(
      performWarpCollective(emu::kLdMatrixX2Trans, ~0u, bLanes, direct()), "");
  auto lanes = mma.lanes(bf16Of);
  for (uint32_t lane = 0; lane < kWarpSize; ++lane) {
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(aLanes[lane].out[i], lanes[lane].in[i]) << lane << " a" << i;
    for (int i = 0; i < 2; ++i)
      EXPECT_EQ(bLanes[lane].out[i], lanes[lane].in[4 + i]) << lane << " b" << i;
  }
  for (uint32_t lane = 0; lane < kWarpSize; ++lane) {
    std::copy_n(aLanes[lane].out.begin(), 4, lanes[lane].in.begin());
    std::copy_n(bLanes[lane].out.begin(), 2, lanes[lane].in.begin() + 4);
  }
  ASSERT_EQ(performWarpCollective(emu::kMmaM16N8K16BF16, ~0u, lanes), "");
  mma.expectProduct(lanes);
}

TEST(WarpCollectives, LdMatrixOfAMisalignedRowIsUndefined) {
  alignas(16) uint16_t storage[9 * 8 + 1];
  const uint16_t *rows[32];
  for (int lane = 0; lane < 8; ++lane)
    rows[lane] = storage + 8 * lane + (lane == 3 ? 1 : 0);
  auto lanes = rowAddresses(rows, 8);
  EXPECT_EQ(performWarpCollective(emu::kLdMatrixX1, ~0u, lanes, direct()),
            "ldmatrix row address of lane 3 is not 16-byte aligned");
}

} // namespace
