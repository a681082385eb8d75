// CRC32C (Castagnoli, the checksum of iSCSI, ext4 metadata, Kafka batches):
// the checksum of every stored log batch, so it sits on the read hot path.
// Uses the SSE4.2 crc32 instruction (three interleaved streams) when the CPU
// has it, chosen once at run time, and a portable slicing-by-8 table
// otherwise; both give identical values. Not a cryptographic hash.
// All functions are pure and thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tokenfeed::crc32c {

// The CRC32C of `data` appended to bytes whose CRC32C was `crc`:
// Extend(Value(a), b) == Value(a + b). Extend(0, ...) starts a new checksum.
uint32_t Extend(uint32_t crc, const void* data, size_t size);

inline uint32_t Value(const void* data, size_t size) { return Extend(0, data, size); }
inline uint32_t Value(std::string_view bytes) { return Extend(0, bytes.data(), bytes.size()); }

// True when Extend uses the SSE4.2 instruction on this machine.
bool HardwareAccelerated();

// The two implementations, for tests and benchmarks that compare them.
// ExtendHardware must only be called when HardwareAccelerated() is true.
uint32_t ExtendPortable(uint32_t crc, const void* data, size_t size);
uint32_t ExtendHardware(uint32_t crc, const void* data, size_t size);

}  // namespace tokenfeed::crc32c
