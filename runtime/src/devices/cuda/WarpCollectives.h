//===- WarpCollectives.h - what a warp's collective computes ----*- C++ -*-===//
//
// The results of a warp collective (shfl.sync, vote.sync, mma.sync
// m16n8k16) for the lanes that take part, as the PTX ISA defines them,
// once every lane of the member mask has reached it (EmulatedGrid.cpp
// gathers the lanes). Kept apart from the scheduling so that its semantics
// can be read, and tested, on their own.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_WARPCOLLECTIVES_H
#define LCC_RUNTIME_WARPCOLLECTIVES_H

#include "CudaEmulatorAbi.h"

#include <array>
#include <cstdint>
#include <string>

namespace lcc::runtime::cuda {

constexpr uint32_t kWarpSize = 32;

/// One lane's registers in a warp collective.
struct WarpLane {
  std::array<uint32_t, lcm::emulator::kWarpWordsIn> in{};
  std::array<uint32_t, lcm::emulator::kWarpWordsOut> out{};
};

/// Computes `out` of every lane of `memberMask` from their `in`. Returns ""
/// or why the result is undefined in CUDA (a shuffle reading a lane outside
/// the mask, an mma.sync of fewer than 32 lanes); the lanes then get a
/// defined stand-in (their own value, or zeros).
std::string performWarpCollective(lcm::emulator::WarpOperation operation,
                                  uint32_t memberMask,
                                  std::array<WarpLane, kWarpSize> &lanes);

/// The float a bf16 or IEEE half holds (every value of either is a float).
float bf16ToFloat(uint16_t bits);
float halfToFloat(uint16_t bits);

} // namespace lcc::runtime::cuda

#endif // LCC_RUNTIME_WARPCOLLECTIVES_H
