// The on-disk format of the embedded log, shared by its writer, readers and
// recovery: file names, the segment, batch and index headers, and the pure
// functions that encode and check them. docs/log_format.md is the byte
// grammar; this header is its constants. No I/O happens here.
// Changing a value below changes the format: add a new version instead.
// All functions are pure and thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "tokenfeed/ids.h"

namespace tokenfeed::log::format {

// --- Topic directory -------------------------------------------------------
inline constexpr std::string_view kMetadataFileName = "topic.meta";
inline constexpr uint32_t kMetadataVersion = 1;
inline constexpr std::string_view kMetadataMagicLine = "tokenfeed-log-topic";
inline constexpr std::string_view kPartitionDirPrefix = "partition-";
inline constexpr int kPartitionDigits = 5;
inline constexpr uint32_t kMaxPartitions = 100000;  // what kPartitionDigits can name

// --- Partition directory ---------------------------------------------------
inline constexpr std::string_view kLockFileName = "LOCK";
inline constexpr std::string_view kSegmentSuffix = ".seg";
inline constexpr std::string_view kIndexSuffix = ".idx";
inline constexpr int kOffsetDigits = 20;  // every uint64 offset, zero-padded

// --- Segment file: header, then batches --------------------------------------
inline constexpr uint64_t kSegmentMagic = 0x474553474f4c4654ull;  // the bytes "TFLOGSEG"
inline constexpr uint32_t kSegmentVersion = 1;
inline constexpr size_t kSegmentHeaderSize = 32;
//   0 u64 magic
//   8 u32 version
//  12 u32 reserved (0)
//  16 u64 base_offset (equals the number in the file name)
//  24 u32 reserved (0)
//  28 u32 crc32c of bytes [0, 28)

// --- Batch: header, then record entries ---------------------------------------
inline constexpr uint32_t kBatchMagic = 0x31424654u;  // the bytes "TFB1"
inline constexpr size_t kBatchHeaderSize = 40;
//   0 u32 magic
//   4 u32 header_crc: crc32c of bytes [8, 40) of the header
//   8 u32 batch_length: header + entries, a multiple of 4
//  12 u32 record_count (at least 1)
//  16 u64 base_offset: offset of the first record
//  24 i64 append_time_unix_ms
//  32 u32 flags (0; a reader rejects unknown bits)
//  36 u32 data_crc: crc32c of bytes [40, batch_length)
// entry := record_length:u32 record:bytes zero padding to a multiple of 4
inline constexpr size_t kEntryLengthSize = 4;
inline constexpr size_t kRecordAlignment = 4;
inline constexpr uint32_t kKnownBatchFlags = 0;
// Large enough for any sensible batch, small enough that a segment (at most
// kMaxSegmentBytes plus one batch) fits the index's u32 positions.
inline constexpr uint64_t kMaxBatchBytes = uint64_t{1} << 30;

// --- Sparse index file: header, then entries -----------------------------------
inline constexpr uint64_t kIndexMagic = 0x584449474f4c4654ull;  // the bytes "TFLOGIDX"
inline constexpr uint32_t kIndexVersion = 1;
inline constexpr size_t kIndexHeaderSize = 32;  // same layout as the segment header
inline constexpr size_t kIndexEntrySize = 8;
//   0 u32 relative_offset: batch base offset minus the segment's base offset
//   4 u32 position: file position of that batch in the segment

// --- Recovery point file: records of 32 bytes, the last valid one counts ----------
// "The active segment with this base was synced through this position",
// appended by the writer after each sync. Only ever an under-claim: it is
// written after the sync it describes, and not synced itself except at
// open and Close (a power cut may leave an older record).
inline constexpr std::string_view kRecoveryPointFileName = "SYNCED";
inline constexpr uint64_t kRecoveryPointMagic = 0x5450434e59534654ull;  // the bytes "TFSYNCPT"
inline constexpr uint32_t kRecoveryPointVersion = 1;
inline constexpr size_t kRecoveryPointSize = 32;
//   0 u64 magic
//   8 u64 segment base_offset
//  16 u64 position: every byte of the segment before it was synced
//  24 u32 version
//  28 u32 crc32c of bytes [0, 28)

// --- Token index file (TOKENS): header, then u64 entries -------------------------
// Kept by the topic layer (src/topic/token_index_file.h), not by the log: the
// log never reads it, and records stay opaque bytes to the log. Entry i is the
// number of token ids stored in the records at offsets [0, i + 1), so the ids
// of any offset range are two entries apart. Not synced: it is repaired from
// the records when a writer opens.
inline constexpr std::string_view kTokenIndexFileName = "TOKENS";
inline constexpr uint64_t kTokenIndexMagic = 0x534e454b4f544654ull;  // the bytes "TFTOKENS"
inline constexpr uint32_t kTokenIndexVersion = 1;
inline constexpr size_t kTokenIndexHeaderSize = 16;
//   0 u64 magic
//   8 u32 version
//  12 u32 reserved (0)
inline constexpr size_t kTokenIndexEntrySize = 8;  // u64 cumulative token ids

// --- Topic limits ------------------------------------------------------------
inline constexpr uint64_t kMinSegmentBytes = 4096;
inline constexpr uint64_t kMaxSegmentBytes = uint64_t{2} << 30;
inline constexpr uint64_t kDefaultSegmentBytes = uint64_t{256} << 20;
inline constexpr uint32_t kDefaultIndexIntervalBytes = 64 << 10;

// --- Names -----------------------------------------------------------------------
std::string PartitionDirName(PartitionId partition);           // "partition-00003"
std::string SegmentFileName(Offset base);                      // "00000000000000001234.seg"
std::string IndexFileName(Offset base);                        // "00000000000000001234.idx"
std::optional<Offset> ParseSegmentFileName(std::string_view name);

// --- Segment and index headers -------------------------------------------------
void EncodeFileHeader(uint64_t magic, uint32_t version, Offset base, uint8_t* out);
// Empty when the header is valid and names `base`; otherwise what is wrong.
std::string CheckFileHeader(uint64_t magic, uint32_t version, Offset base, const uint8_t* header);

// --- Batch header -------------------------------------------------------------
struct BatchHeader {
  uint32_t batch_length = 0;
  uint32_t record_count = 0;
  Offset base_offset;
  int64_t append_time_unix_ms = 0;
  uint32_t flags = 0;
  uint32_t data_crc = 0;

  Offset end_offset() const { return base_offset + record_count; }
};

// Writes all 40 header bytes (magic and header CRC included).
void EncodeBatchHeader(const BatchHeader& h, uint8_t* out);
// Decodes and checks a header: magic, header CRC, length, count, flags.
// Returns an empty string when it is valid, else what is wrong.
std::string DecodeBatchHeader(const uint8_t* in, BatchHeader* out);
// Checks the entries of a batch whose header is valid: `batch` is the whole
// batch (batch_length bytes). With verify_crc, also the data CRC.
std::string CheckBatchBody(std::span<const uint8_t> batch, const BatchHeader& h, bool verify_crc);

// The size a record of `n` bytes takes inside a batch.
constexpr size_t EntrySize(size_t record_bytes) {
  return kEntryLengthSize + (record_bytes + kRecordAlignment - 1) / kRecordAlignment * kRecordAlignment;
}

}  // namespace tokenfeed::log::format
