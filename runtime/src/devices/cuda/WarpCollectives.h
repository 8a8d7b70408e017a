//===- WarpCollectives.h - what a warp's collective computes ----*- C++ -*-===//
//
// The results of a warp collective (shfl.sync, vote.sync, mma.sync
// m16n8k16, ldmatrix) for the lanes that take part, as the PTX ISA defines them,
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
#include <functional>
#include <string>

namespace lcc::runtime::cuda {

constexpr uint32_t kWarpSize = 32;

/// One lane's registers in a warp collective.
struct WarpLane {
  std::array<uint32_t, lcm::emulator::kWarpWordsIn> in{};
  std::array<uint32_t, lcm::emulator::kWarpWordsOut> out{};
};

/// The 16 bytes of lane `lane`'s ldmatrix row, at `address` (the lane's
/// in words), as the emulator's checks let the lane read them.
using RowReader =
    std::function<const uint8_t *(uint32_t lane, const uint8_t *address)>;

/// Computes `out` of every lane of `memberMask` from their `in` (ldmatrix
/// reads its rows through `rows`). Returns "" or why the result is
/// undefined in CUDA (a shuffle reading a lane outside the mask, an
/// mma.sync or ldmatrix of fewer than 32 lanes, a row address that is not
/// 16-byte aligned); the lanes then get a defined stand-in (their own
/// value, or zeros).
std::string performWarpCollective(lcm::emulator::WarpOperation operation,
                                  uint32_t memberMask,
                                  std::array<WarpLane, kWarpSize> &lanes,
                                  const RowReader &rows = nullptr);

/// The float a bf16 or IEEE half holds (every value of either is a float).
float bf16ToFloat(uint16_t bits);
float halfToFloat(uint16_t bits);

} // namespace lcc::runtime::cuda

#endif // LCC_RUNTIME_WARPCOLLECTIVES_H
