// The constants of the token record wire format (docs/record_format.md has the
// byte grammar): one record holds one document's token ids and its source
// position, and is the same bytes in the embedded log and as a Kafka message
// value. Only constants live here; record.h has the encoder and the parser.
// Changing any value below changes the format: add a new version instead.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tokenfeed::record::format {

// The version this build writes. It reads exactly the versions listed in
// record.h (today: 1).
inline constexpr uint8_t kVersion1 = 1;
inline constexpr uint8_t kCurrentVersion = kVersion1;

// The fixed part of a version-1 record, little-endian.
inline constexpr size_t kVersionOffset = 0;          // u8
inline constexpr size_t kFlagsOffset = 1;            // u8
inline constexpr size_t kSourcePathLengthOffset = 2; // u16
inline constexpr size_t kIdCountOffset = 4;          // u32
inline constexpr size_t kDocSeqOffset = 8;           // u64
inline constexpr size_t kSourceLineOffset = 16;      // u64
inline constexpr size_t kSourceByteOffset = 24;      // u64
inline constexpr size_t kAttributesLengthOffset = 32;// u16
inline constexpr size_t kReservedOffset = 34;        // u16, always 0
inline constexpr size_t kHeaderSize = 36;

// Flag bits. A reader rejects a record with a bit it does not know.
inline constexpr uint8_t kFlagIds32 = 0x01;  // ids are u32; without it, u16
// The document came from a message of a raw-text topic (serve), not a file:
// source_path is the topic's URI, source_line its partition and
// source_byte_offset (and doc_seq) its offset.
inline constexpr uint8_t kFlagMessageSource = 0x02;
inline constexpr uint8_t kKnownFlags = kFlagIds32 | kFlagMessageSource;

// The ids start at a multiple of this many bytes from the record's first
// byte (zero padding before them), so a record placed at a 4-aligned address
// has naturally aligned ids.
inline constexpr size_t kIdAlignment = 4;

// Limits, checked by the encoder and the parser.
inline constexpr size_t kMaxSourcePathBytes = 4096;
inline constexpr size_t kMaxAttributesBytes = 1024;  // the whole attribute block
inline constexpr size_t kMaxAttributeKeyBytes = 255;
inline constexpr uint64_t kMaxIdCount = UINT32_MAX;

// One attribute in the block: u8 key length (1..255), key bytes, u16 value
// length, value bytes.
inline constexpr size_t kAttributeOverhead = 3;

}  // namespace tokenfeed::record::format
