//===- ModuleFormat.h - what the .lcm format fixes beside lcm.fbs -*- C++
//-*-===//
//
// The definitions of the artifact format that the schema cannot state,
// header-only and dependency-free, so that the compiler's writer, the
// runtime's loader and the test tools take them from one place: the
// version a loader reads, the checksum of embedded bytes, and the names
// reserved for a decode step's caches.
//
// The checksum is CRC-64/XZ (the ECMA-182 polynomial, reflected, as xz
// and Go's crc64.ECMA compute it; "123456789" gives 0x995DC9BBDF1939FA) of
// an executable's code and of an embedded parameter's bytes. The compiler
// records it, the loader recomputes it before anything is mapped or copied: a
// CRC detects every single-bit flip and every burst of up to 64 bits, where a
// hash would only make them unlikely to pass. It guards against corruption, not
// tampering: whoever edits a file can recompute it.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_SCHEMA_MODULEFORMAT_H
#define LCC_RUNTIME_SCHEMA_MODULEFORMAT_H

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace lcc::lcm {

/// The version this format is (Module.version): a loader reads it and no
/// other, a writer writes it. Bumped whenever a field changes meaning.
constexpr uint32_t kModuleVersion = 9;

/// The most ranks a module's sequences may be split over
/// (Module.context_parallel), as lcc --context-parallel allows.
constexpr uint32_t kMaxContextParallel = uint32_t(1) << 20;

/// State parameters named with this prefix are a decode step's key and
/// value caches (lcc --decode): scratch that the runtime neither writes to
/// a checkpoint nor asks of one.
constexpr char kDecodeCachePrefix[] = "decode.cache.";

namespace detail {

/// The eight tables of the slicing-by-8 CRC: table[0] the byte-at-a-time
/// one, table[k] a byte k positions further from the end.
struct Crc64Tables {
  uint64_t table[8][256] = {};

  constexpr Crc64Tables() {
    constexpr uint64_t kPolynomial = 0xC96C5795D7870F42ull; // reflected
    for (uint64_t n = 0; n < 256; ++n) {
      uint64_t crc = n;
      for (int bit = 0; bit < 8; ++bit)
        crc = crc & 1 ? (crc >> 1) ^ kPolynomial : crc >> 1;
      table[0][n] = crc;
    }
    for (int k = 1; k < 8; ++k)
      for (int n = 0; n < 256; ++n)
        table[k][n] = (table[k - 1][n] >> 8) ^ table[0][table[k - 1][n] & 0xff];
  }
};

inline constexpr Crc64Tables kCrc64Tables;

} // namespace detail

/// CRC-64/XZ of `size` bytes at `data`.
inline uint64_t checksum(const void *data, size_t size) {
  const auto &t = detail::kCrc64Tables.table;
  const unsigned char *bytes = static_cast<const unsigned char *>(data);
  uint64_t crc = ~uint64_t(0);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  for (; size >= 8; bytes += 8, size -= 8) {
    uint64_t word;
    std::memcpy(&word, bytes, sizeof(word));
    crc ^= word;
    crc = t[7][crc & 0xff] ^ t[6][(crc >> 8) & 0xff] ^
          t[5][(crc >> 16) & 0xff] ^ t[4][(crc >> 24) & 0xff] ^
          t[3][(crc >> 32) & 0xff] ^ t[2][(crc >> 40) & 0xff] ^
          t[1][(crc >> 48) & 0xff] ^ t[0][crc >> 56];
  }
#endif
  for (; size > 0; ++bytes, --size)
    crc = t[0][(crc ^ *bytes) & 0xff] ^ (crc >> 8);
  return ~crc;
}

} // namespace lcc::lcm

#endif // LCC_RUNTIME_SCHEMA_MODULEFORMAT_H
