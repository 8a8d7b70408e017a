//===- WarpCollectives.cpp - what a warp's collective computes ------------===//
//
// Each operation follows the PTX ISA's definition: shfl.sync's lane
// arithmetic with the clamp value and segment mask of its c operand,
// vote.sync over the member mask, and mma.sync.m16n8k16.row.col with f32
// accumulators in the ISA's fragment layouts (groupID = lane / 4,
// threadID_in_group = lane % 4):
//
//   A (16 x 16, row-major), a_i, i < 8, two to a register (a_0 low):
//     row = groupID + 8 * ((i / 2) % 2),  col = 2 * tig + i % 2 + 8 * (i / 4)
//   B (16 x 8, column-major), b_i, i < 4:
//     row = 2 * tig + i % 2 + 8 * (i / 2),  col = groupID
//   C, D (16 x 8), c_i, i < 4:
//     row = groupID + 8 * (i / 2),  col = 2 * tig + i % 2
//
// and for mma.sync.m16n8k8.row.col with tf32 A and B, one value a register:
//
//   A (16 x 8), a_i, i < 4: row = groupID + 8 * (i % 2), col = tig + 4 * (i / 2)
//   B (8 x 8), b_i, i < 2:  row = tig + 4 * i,  col = groupID
//
// A tf32 register is an f32 whose low 13 bits the tensor core ignores.
//
// The products of bf16 or f16 values are exact in double; D is their sum
// with C in double, rounded once to f32. Tensor cores sum in an order and
// with intermediate roundings the ISA leaves open, so the last bit of a
// hardware result may differ.
//
// ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].b16 loads 8 x 8 matrices of
// 16-bit values whose rows lanes 8i-8i+7 address (16 bytes each): lane l's
// register i holds row l / 4, columns 2 (l % 4) and 2 (l % 4) + 1 of
// matrix i; with .trans, column l / 4 of rows 2 (l % 4) and 2 (l % 4) + 1.
//
//===----------------------------------------------------------------------===//

#include "devices/cuda/WarpCollectives.h"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace lcc::runtime::cuda {
namespace {

namespace abi = lcm::emulator;

bool inMask(uint32_t mask, uint32_t lane) { return (mask >> lane) & 1; }

float asFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

/// shfl.sync: in {a, b, c}, out {d, p}.
std::string shuffle(abi::WarpOperation mode, uint32_t mask,
                    std::array<WarpLane, kWarpSize> &lanes) {
  std::string problem;
  std::array<uint32_t, kWarpSize> source{};
  for (uint32_t lane = 0; lane < kWarpSize; ++lane)
    source[lane] = lanes[lane].in[0];
  for (uint32_t lane = 0; lane < kWarpSize; ++lane) {
    if (!inMask(mask, lane))
      continue;
    const auto &in = lanes[lane].in;
    int32_t b = int32_t(in[1] & 31);
    int32_t clamp = int32_t(in[2] & 31);
    int32_t segmentMask = int32_t((in[2] >> 8) & 31);
    int32_t maxLane = (int32_t(lane) & segmentMask) | (clamp & ~segmentMask);
    int32_t minLane = int32_t(lane) & segmentMask;
    int32_t j = 0;
    bool inRange = false;
    switch (mode) {
    case abi::kShuffleUp:
      j = int32_t(lane) - b;
      inRange = j >= maxLane;
      break;
    case abi::kShuffleDown:
      j = int32_t(lane) + b;
      inRange = j <= maxLane;
      break;
    case abi::kShuffleButterfly:
      j = int32_t(lane) ^ b;
      inRange = j <= maxLane;
      break;
    default:
      j = minLane | (b & ~segmentMask);
      inRange = j <= maxLane;
      break;
    }
    if (!inRange)
      j = int32_t(lane);
    if (!inMask(mask, uint32_t(j))) {
      if (problem.empty())
        problem = "shfl.sync of lane " + std::to_string(lane) +
                  " reads lane " + std::to_string(j) +
                  ", which is not in its member mask";
      j = int32_t(lane);
    }
    lanes[lane].out[0] = source[uint32_t(j)];
    lanes[lane].out[1] = inRange;
  }
  return problem;
}

/// vote.sync: in {predicate}, out {result}.
void vote(abi::WarpOperation mode, uint32_t mask,
          std::array<WarpLane, kWarpSize> &lanes) {
  uint32_t ballot = 0;
  for (uint32_t lane = 0; lane < kWarpSize; ++lane)
    if (inMask(mask, lane) && lanes[lane].in[0] != 0)
      ballot |= 1u << lane;
  uint32_t result = 0;
  switch (mode) {
  case abi::kVoteAll:
    result = ballot == mask;
    break;
  case abi::kVoteAny:
    result = ballot != 0;
    break;
  case abi::kVoteUniform:
    result = ballot == 0 || ballot == mask;
    break;
  default:
    result = ballot;
    break;
  }
  for (uint32_t lane = 0; lane < kWarpSize; ++lane)
    if (inMask(mask, lane))
      lanes[lane].out[0] = result;
}

/// Why an mma.sync of member mask `mask` is undefined ("" when it is the
/// whole warp's); the lanes' outputs are then zeros.
std::string partOfWarp(uint32_t mask, std::array<WarpLane, kWarpSize> &lanes) {
  if (mask == ~0u)
    return "";
  for (WarpLane &lane : lanes)
    lane.out.fill(0);
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", mask);
  return "mma.sync with member mask " + std::string(text) +
         ": it is a collective of all 32 lanes";
}

/// D = A B + C into each lane's out {d0..d3}, C read from its in {c0..c3}
/// (in[6..9]) in the C/D layout: the exact products summed in double and
/// rounded once.
template <unsigned K>
void multiplyIntoFragments(const double (&a)[16][K], const double (&b)[K][8],
                           std::array<WarpLane, kWarpSize> &lanes) {
  double c[16][8];
  for (uint32_t lane = 0; lane < kWarpSize; ++lane)
    for (uint32_t i = 0; i < 4; ++i)
      c[lane / 4 + 8 * (i / 2)][2 * (lane % 4) + i % 2] =
          asFloat(lanes[lane].in[6 + i]);
  for (uint32_t lane = 0; lane < kWarpSize; ++lane)
    for (uint32_t i = 0; i < 4; ++i) {
      uint32_t row = lane / 4 + 8 * (i / 2), col = 2 * (lane % 4) + i % 2;
      double sum = c[row][col];
      for (uint32_t k = 0; k < K; ++k)
        sum += a[row][k] * b[k][col];
      lanes[lane].out[i] = bitsOf(float(sum));
    }
}

/// mma.sync.m16n8k16.row.col.f32.{bf16,f16}.f32: in {a0..a3, b0, b1,
/// c0..c3}, out {d0..d3}.
std::string multiplyAccumulate(bool bf16, uint32_t mask,
                               std::array<WarpLane, kWarpSize> &lanes) {
  if (std::string problem = partOfWarp(mask, lanes); !problem.empty())
    return problem;
  auto half = [&](uint32_t word, unsigned which) {
    auto bits = uint16_t(which ? word >> 16 : word & 0xffff);
    return double(bf16 ? bf16ToFloat(bits) : halfToFloat(bits));
  };
  double a[16][16], b[16][8];
  for (uint32_t lane = 0; lane < kWarpSize; ++lane) {
    uint32_t group = lane / 4, tig = lane % 4;
    const auto &in = lanes[lane].in;
    for (uint32_t i = 0; i < 8; ++i)
      a[group + 8 * ((i / 2) % 2)][2 * tig + i % 2 + 8 * (i / 4)] =
          half(in[i / 2], i % 2);
    for (uint32_t i = 0; i < 4; ++i)
      b[2 * tig + i % 2 + 8 * (i / 2)][group] = half(in[4 + i / 2], i % 2);
  }
  multiplyIntoFragments(a, b, lanes);
  return "";
}

/// ldmatrix: in {address low, address high}, out one register a matrix.
std::string loadMatrices(unsigned matrices, bool transposed, uint32_t mask,
                         std::array<WarpLane, kWarpSize> &lanes,
                         const RowReader &rows) {
  for (WarpLane &lane : lanes)
    lane.out.fill(0);
  if (mask != ~0u || !rows)
    return "ldmatrix of part of a warp: it is a collective of all 32 lanes";
  // Each matrix's 8 rows of 8 16-bit values, as the lanes address them.
  uint16_t values[4][8][8];
  std::string problem;
  for (uint32_t lane = 0; lane < 8 * matrices; ++lane) {
    uint64_t address =
        uint64_t(lanes[lane].in[0]) | uint64_t(lanes[lane].in[1]) << 32;
    if (address % 16 != 0 && problem.empty())
      problem = "ldmatrix row address of lane " + std::to_string(lane) +
                " is not 16-byte aligned";
    const uint8_t *row =
        rows(lane, reinterpret_cast<const uint8_t *>(uintptr_t(address)));
    std::memcpy(values[lane / 8][lane % 8], row, 16);
  }
  for (uint32_t lane = 0; lane < kWarpSize; ++lane)
    for (unsigned matrix = 0; matrix < matrices; ++matrix) {
      uint32_t word = 0;
      for (unsigned half = 0; half < 2; ++half) {
        unsigned row = lane / 4, column = 2 * (lane % 4) + half;
        uint16_t value = transposed ? values[matrix][column][row]
                                    : values[matrix][row][column];
        word |= uint32_t(value) << (16 * half);
      }
      lanes[lane].out[matrix] = word;
    }
  return problem;
}

/// mma.sync.m16n8k8.row.col.f32.tf32.tf32.f32: in {a0..a3, b0, b1,
/// c0..c3}, out {d0..d3}.
std::string multiplyAccumulateTF32(uint32_t mask,
                                   std::array<WarpLane, kWarpSize> &lanes) {
  if (std::string problem = partOfWarp(mask, lanes); !problem.empty())
    return problem;
  auto tf32 = [](uint32_t bits) { return double(asFloat(bits & 0xffffe000u)); };
  double a[16][8], b[8][8];
  for (uint32_t lane = 0; lane < kWarpSize; ++lane) {
    uint32_t group = lane / 4, tig = lane % 4;
    const auto &in = lanes[lane].in;
    for (uint32_t i = 0; i < 4; ++i)
      a[group + 8 * (i % 2)][tig + 4 * (i / 2)] = tf32(in[i]);
    for (uint32_t i = 0; i < 2; ++i)
      b[tig + 4 * i][group] = tf32(in[4 + i]);
  }
  multiplyIntoFragments(a, b, lanes);
  return "";
}

} // namespace

float bf16ToFloat(uint16_t bits) { return asFloat(uint32_t(bits) << 16); }

float halfToFloat(uint16_t bits) {
  uint32_t sign = bits >> 15, exponent = (bits >> 10) & 31,
           mantissa = bits & 1023;
  float magnitude;
  if (exponent == 31)
    magnitude = mantissa ? NAN : INFINITY;
  else if (exponent == 0)
    magnitude = std::ldexp(float(mantissa), -24);
  else
    magnitude = std::ldexp(float(mantissa | 1024), int(exponent) - 25);
  return sign ? -magnitude : magnitude;
}

std::string performWarpCollective(abi::WarpOperation operation,
                                  uint32_t memberMask,
                                  std::array<WarpLane, kWarpSize> &lanes,
                                  const RowReader &rows) {
  switch (operation) {
  case abi::kShuffleUp:
  case abi::kShuffleDown:
  case abi::kShuffleButterfly:
  case abi::kShuffleIndex:
    return shuffle(operation, memberMask, lanes);
  case abi::kVoteAll:
  case abi::kVoteAny:
  case abi::kVoteUniform:
  case abi::kVoteBallot:
    vote(operation, memberMask, lanes);
    return "";
  case abi::kMmaM16N8K16BF16:
  case abi::kMmaM16N8K16F16:
    return multiplyAccumulate(operation == abi::kMmaM16N8K16BF16, memberMask,
                              lanes);
  case abi::kMmaM16N8K8TF32:
    return multiplyAccumulateTF32(memberMask, lanes);
  case abi::kLdMatrixX1:
  case abi::kLdMatrixX2:
  case abi::kLdMatrixX4:
  case abi::kLdMatrixX1Trans:
  case abi::kLdMatrixX2Trans:
  case abi::kLdMatrixX4Trans: {
    unsigned index = operation - abi::kLdMatrixX1;
    return loadMatrices(1u << (index % 3), index >= 3, memberMask, lanes,
                        rows);
  }
  case abi::kWarpOperationCount:
    break;
  }
  return "unknown warp collective";
}

} // namespace lcc::runtime::cuda
