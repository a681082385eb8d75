#include "base/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__) || defined(_M_X64)
#include <nmmintrin.h>
#define TOKENFEED_CRC32C_X86 1
#endif

namespace tokenfeed::crc32c {
namespace {

// The reflected Castagnoli polynomial.
constexpr uint32_t kPolynomial = 0x82F63B78u;

using Table = std::array<std::array<uint32_t, 256>, 8>;

// Slicing-by-8 tables: kTables[k][b] is the register change that byte b
// causes when k more bytes follow it in the same 8-byte word.
constexpr Table MakeSlicingTables() {
  Table t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b;
    for (int bit = 0; bit < 8; ++bit) c = (c & 1) ? (c >> 1) ^ kPolynomial : c >> 1;
    t[0][b] = c;
  }
  for (int k = 1; k < 8; ++k) {
    for (uint32_t b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
  }
  return t;
}
constexpr Table kTables = MakeSlicingTables();

inline uint64_t LoadLittleEndian64(const uint8_t* p) {
  // Assembled byte by byte so the value is right on any host; compilers turn
  // this into one load on little-endian machines.
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// The raw register update (no pre- or post-inversion).
uint32_t RawPortable(uint32_t c, const uint8_t* p, size_t n) {
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    c = kTables[0][(c ^ *p++) & 0xff] ^ (c >> 8);
    --n;
  }
  while (n >= 8) {
    const uint64_t w = LoadLittleEndian64(p) ^ c;
    c = kTables[7][w & 0xff] ^ kTables[6][(w >> 8) & 0xff] ^ kTables[5][(w >> 16) & 0xff] ^
        kTables[4][(w >> 24) & 0xff] ^ kTables[3][(w >> 32) & 0xff] ^ kTables[2][(w >> 40) & 0xff] ^
        kTables[1][(w >> 48) & 0xff] ^ kTables[0][w >> 56];
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    c = kTables[0][(c ^ *p++) & 0xff] ^ (c >> 8);
    --n;
  }
  return c;
}

#if TOKENFEED_CRC32C_X86

// The crc32 instruction has a latency of three cycles but a throughput of
// one, so three independent streams over three adjacent blocks run about
// three times faster than one. The streams are then joined: the register of
// a block followed by L zero bytes is a linear function of the register,
// kept as four 256-entry tables per block length L.
constexpr size_t kLongBlock = 8192;
constexpr size_t kShortBlock = 256;

struct ShiftTables {
  std::array<std::array<uint32_t, 256>, 4> t;
};

ShiftTables MakeShiftTables(size_t zero_bytes) {
  static const std::array<uint8_t, kLongBlock> kZeros{};
  uint32_t column[32];
  for (int bit = 0; bit < 32; ++bit) column[bit] = RawPortable(1u << bit, kZeros.data(), zero_bytes);
  ShiftTables s{};
  for (int k = 0; k < 4; ++k) {
    for (uint32_t v = 0; v < 256; ++v) {
      uint32_t x = 0;
      for (int bit = 0; bit < 8; ++bit) {
        if (v & (1u << bit)) x ^= column[8 * k + bit];
      }
      s.t[k][v] = x;
    }
  }
  return s;
}

inline uint32_t Shift(const ShiftTables& s, uint32_t c) {
  return s.t[0][c & 0xff] ^ s.t[1][(c >> 8) & 0xff] ^ s.t[2][(c >> 16) & 0xff] ^ s.t[3][c >> 24];
}

const ShiftTables& LongShift() {
  static const ShiftTables tables = MakeShiftTables(kLongBlock);
  return tables;
}
const ShiftTables& ShortShift() {
  static const ShiftTables tables = MakeShiftTables(kShortBlock);
  return tables;
}

__attribute__((target("sse4.2"))) inline uint64_t Load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

template <size_t kBlock>
__attribute__((target("sse4.2"))) inline uint32_t ThreeStreams(const ShiftTables& shift, uint32_t c,
                                                               const uint8_t*& p, size_t& n) {
  while (n >= 3 * kBlock) {
    uint64_t c0 = c, c1 = 0, c2 = 0;
    const uint8_t* const end = p + kBlock;
    do {
      c0 = _mm_crc32_u64(c0, Load64(p));
      c1 = _mm_crc32_u64(c1, Load64(p + kBlock));
      c2 = _mm_crc32_u64(c2, Load64(p + 2 * kBlock));
      p += 8;
    } while (p < end);
    c = Shift(shift, static_cast<uint32_t>(c0)) ^ static_cast<uint32_t>(c1);
    c = Shift(shift, c) ^ static_cast<uint32_t>(c2);
    p += 2 * kBlock;
    n -= 3 * kBlock;
  }
  return c;
}

__attribute__((target("sse4.2"))) uint32_t RawHardware(uint32_t c, const uint8_t* p, size_t n) {
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    c = _mm_crc32_u8(c, *p++);
    --n;
  }
  if (n >= 3 * kLongBlock) c = ThreeStreams<kLongBlock>(LongShift(), c, p, n);
  if (n >= 3 * kShortBlock) c = ThreeStreams<kShortBlock>(ShortShift(), c, p, n);
  uint64_t c64 = c;
  while (n >= 8) {
    c64 = _mm_crc32_u64(c64, Load64(p));
    p += 8;
    n -= 8;
  }
  c = static_cast<uint32_t>(c64);
  while (n > 0) {
    c = _mm_crc32_u8(c, *p++);
    --n;
  }
  return c;
}

bool DetectHardware() { return __builtin_cpu_supports("sse4.2"); }

#else

bool DetectHardware() { return false; }

#endif

}  // namespace

bool HardwareAccelerated() {
  static const bool available = DetectHardware();
  return available;
}

uint32_t ExtendPortable(uint32_t crc, const void* data, size_t size) {
  return ~RawPortable(~crc, static_cast<const uint8_t*>(data), size);
}

uint32_t ExtendHardware(uint32_t crc, const void* data, size_t size) {
#if TOKENFEED_CRC32C_X86
  return ~RawHardware(~crc, static_cast<const uint8_t*>(data), size);
#else
  return ExtendPortable(crc, data, size);
#endif
}

uint32_t Extend(uint32_t crc, const void* data, size_t size) {
  return HardwareAccelerated() ? ExtendHardware(crc, data, size) : ExtendPortable(crc, data, size);
}

}  // namespace tokenfeed::crc32c
