// The byte-level pieces the Kafka token index's records are made of
// (kafka_index_chunk.h, kafka_index_summary.h): little-endian fixed-width
// integers and unsigned LEB128 varints, taken only in their shortest form so
// that a record has one encoding. Not a general serialization library.
// The readers do not check bounds for fixed-width fields (the caller has
// checked the header's size); GetIndexVarint checks its own.
// Thread-safety: plain functions.
#pragma once

#include <cstdint>
#include <string>

namespace tokenfeed::topic::index_bytes {

inline void PutU32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
inline void PutU64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
inline void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}
inline uint32_t GetU32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
inline uint64_t GetU64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// A varint of at most 10 bytes, in its shortest form (no final zero byte
// after the first), whose value fits 64 bits; false otherwise (or when the
// bytes end first). Advances *at past it.
inline bool GetVarint(const uint8_t** at, const uint8_t* end, uint64_t* value) {
  uint64_t v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (*at == end) return false;
    const uint8_t b = *(*at)++;
    const uint64_t part = b & 0x7f;
    if (shift == 63 && part > 1) return false;  // past 64 bits
    v |= part << shift;
    if ((b & 0x80) == 0) {
      if (b == 0 && shift > 0) return false;  // not the shortest form
      *value = v;
      return true;
    }
  }
  return false;
}

}  // namespace tokenfeed::topic::index_bytes
