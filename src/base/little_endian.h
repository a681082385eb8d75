// Loads and stores of little-endian integers at any (unaligned) address: the
// byte order of every tokenfeed format. memcpy keeps them free of aliasing and
// alignment problems; on little-endian machines each compiles to one move.
// Pure functions, thread-safe.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

namespace tokenfeed {

namespace little_endian_internal {
// std::byteswap is C++23; the builtins cover the widths the formats use.
inline uint8_t Swap(uint8_t v) { return v; }
inline uint16_t Swap(uint16_t v) { return __builtin_bswap16(v); }
inline uint32_t Swap(uint32_t v) { return __builtin_bswap32(v); }
inline uint64_t Swap(uint64_t v) { return __builtin_bswap64(v); }
}  // namespace little_endian_internal

template <typename T>
inline T LoadLittleEndian(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  if constexpr (std::endian::native == std::endian::big) v = little_endian_internal::Swap(v);
  return v;
}

template <typename T>
inline void StoreLittleEndian(void* p, T v) {
  if constexpr (std::endian::native == std::endian::big) v = little_endian_internal::Swap(v);
  std::memcpy(p, &v, sizeof(T));
}

}  // namespace tokenfeed
