//===- CpuFeatures.cpp - which CPU features this CPU has ------------------===//

#include "devices/cpu/CpuFeatures.h"

#include <cstdint>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace lcc::runtime {

namespace {

enum Register { Eax, Ebx, Ecx, Edx };

/// Where CPUID reports a feature, and which XCR0 state components the
/// operating system must enable for its registers.
struct FeatureBit {
  const char *name;
  uint32_t leaf, subleaf;
  Register reg;
  unsigned bit;
  uint64_t osState;
};

constexpr uint64_t kAvxState = 0x6;      // SSE and AVX registers
constexpr uint64_t kAvx512State = 0xe6;  // and opmask, ZMM upper halves
constexpr uint64_t kTileState = 0x60000; // AMX tile config and data

constexpr FeatureBit kFeatures[] = {
    {"sse4.2", 1, 0, Ecx, 20, 0},
    {"popcnt", 1, 0, Ecx, 23, 0},
    {"movbe", 1, 0, Ecx, 22, 0},
    {"fma", 1, 0, Ecx, 12, kAvxState},
    {"avx", 1, 0, Ecx, 28, kAvxState},
    {"f16c", 1, 0, Ecx, 29, kAvxState},
    {"lzcnt", 0x80000001, 0, Ecx, 5, 0},
    {"bmi", 7, 0, Ebx, 3, 0},
    {"avx2", 7, 0, Ebx, 5, kAvxState},
    {"bmi2", 7, 0, Ebx, 8, 0},
    {"avx512f", 7, 0, Ebx, 16, kAvx512State},
    {"avx512dq", 7, 0, Ebx, 17, kAvx512State},
    {"avx512ifma", 7, 0, Ebx, 21, kAvx512State},
    {"avx512cd", 7, 0, Ebx, 28, kAvx512State},
    {"avx512bw", 7, 0, Ebx, 30, kAvx512State},
    {"avx512vl", 7, 0, Ebx, 31, kAvx512State},
    {"avx512vbmi", 7, 0, Ecx, 1, kAvx512State},
    {"avx512vbmi2", 7, 0, Ecx, 6, kAvx512State},
    {"gfni", 7, 0, Ecx, 8, 0},
    {"vaes", 7, 0, Ecx, 9, kAvxState},
    {"vpclmulqdq", 7, 0, Ecx, 10, kAvxState},
    {"avx512vnni", 7, 0, Ecx, 11, kAvx512State},
    {"avx512bitalg", 7, 0, Ecx, 12, kAvx512State},
    {"avx512vpopcntdq", 7, 0, Ecx, 14, kAvx512State},
    {"avx512vp2intersect", 7, 0, Edx, 8, kAvx512State},
    {"amx-bf16", 7, 0, Edx, 22, kTileState},
    {"avx512fp16", 7, 0, Edx, 23, kAvx512State},
    {"amx-tile", 7, 0, Edx, 24, kTileState},
    {"amx-int8", 7, 0, Edx, 25, kTileState},
    {"avxvnni", 7, 1, Eax, 4, kAvxState},
    {"avx512bf16", 7, 1, Eax, 5, kAvx512State},
    {"amx-fp16", 7, 1, Eax, 21, kTileState},
};

#if defined(__x86_64__)
bool cpuidBit(uint32_t leaf, uint32_t subleaf, Register reg, unsigned bit) {
  unsigned regs[4] = {0, 0, 0, 0};
  if (!__get_cpuid_count(leaf, subleaf, &regs[0], &regs[1], &regs[2], &regs[3]))
    return false;
  return (regs[reg] >> bit) & 1;
}

/// The state components the operating system saves (XCR0), 0 without
/// OSXSAVE.
uint64_t enabledState() {
  if (!cpuidBit(1, 0, Ecx, 27))
    return 0;
  uint32_t low, high;
  __asm__ volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
  return (uint64_t(high) << 32) | low;
}
#endif

const FeatureBit *findFeature(const std::string &name) {
  for (const FeatureBit &f : kFeatures)
    if (name == f.name)
      return &f;
  return nullptr;
}

} // namespace

bool isTestedCpuFeature(const std::string &feature) {
  return findFeature(feature) != nullptr;
}

std::optional<bool> cpuSupports(const std::string &feature) {
  const FeatureBit *f = findFeature(feature);
  if (!f)
    return std::nullopt;
#if defined(__x86_64__)
  static const uint64_t state = enabledState();
  return cpuidBit(f->leaf, f->subleaf, f->reg, f->bit) &&
         (state & f->osState) == f->osState;
#else
  return false;
#endif
}

std::vector<std::string> lackedCpuFeatures(
    const std::vector<std::string> &required,
    const std::function<std::optional<bool>(const std::string &)> &supports) {
  std::vector<std::string> lacked;
  for (const std::string &feature : required)
    if (supports(feature) == false)
      lacked.push_back(feature);
  return lacked;
}

} // namespace lcc::runtime
