// SegmentReader: reads and checks the batches of one segment file, either
// through a large reusable buffer (one pread fills it with many batches) or,
// for a sealed segment, straight from a read-only memory map (no copy at
// all). It is the only code that parses batches from disk: partition
// readers, writer recovery, index rebuilds and Describe all use it.
// Only sealed segments may be mapped: nothing ever cuts them shorter, while
// the active segment's tail can be cut by recovery or a failed write, which
// would fault a mapping; pread just returns fewer bytes.
// It does not interpret what it finds at the tail: ReadAt reports "end",
// "incomplete" (a batch still being written, or torn) or "damaged" and the
// caller decides whether that is corruption.
// A batch is returned only when all of its bytes are in the file and its
// checks pass, so a half-written batch is never visible.
// Not thread-safe. Returned batch bytes are valid until the next call.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "base/file_system.h"
#include "log/log_format.h"
#include "tokenfeed/ids.h"
#include "tokenfeed/status.h"

namespace tokenfeed::log {

class SegmentReader {
 public:
  enum class Outcome {
    kBatch,       // a complete, valid batch
    kEnd,         // no byte at this position: the end of the written data
    kIncomplete,  // some bytes, but not a whole batch (being written, or torn)
    kDamaged,     // bytes that are not a valid batch; see problem()
  };

  struct Batch {
    format::BatchHeader header;
    uint64_t position = 0;
    std::span<const uint8_t> bytes;  // the whole batch, header included
  };

  enum class Access { kRead, kMap };

  // Opens `path` and checks its segment header against `base`. A file too
  // short for a header, or with a bad one, opens anyway (header_problem()
  // says what is wrong) so that recovery can decide what to do with it.
  // kMap falls back to kRead where the file system cannot map.
  static Result<std::unique_ptr<SegmentReader>> Open(FileSystem* fs, const std::string& path, Offset base,
                                                     size_t buffer_bytes, Access access = Access::kRead);

  const std::string& path() const { return file_->path(); }
  Offset base_offset() const { return base_; }
  // Empty when the segment header is valid.
  const std::string& header_problem() const { return header_problem_; }

  // How much of a batch ReadAt checks. The header's checksum is always
  // checked, and all of the batch's bytes must be in the file.
  enum class Check {
    kPresence,  // nothing more, and batch.bytes stays empty: for walking
                // over batches (a seek's scan, the end offset) without
                // reading their data
    kHeader,    // nothing more (a batch this reader checked before)
    kRecords,   // the record entries fill the batch exactly
    kChecksum,  // that, and the data checksum
  };
  // Reads the batch that starts at file position `position`. After kIncomplete
  // the buffer is forgotten: the next call reads the batch's header again
  // from the file (a torn batch may have been cut and replaced meanwhile).
  Result<Outcome> ReadAt(uint64_t position, Check check, Batch* batch);
  // Bytes [position, position + n) of the file, fewer only where it ends
  // first: part of a batch whose whole this reader checked before, read
  // without the rest. Valid until the next call.
  Result<std::span<const uint8_t>> ReadPart(uint64_t position, size_t n) { return Bytes(position, n, n); }
  // What was wrong with the last kDamaged or kIncomplete outcome.
  const std::string& problem() const { return problem_; }

  // The first position after `from` (4-aligned) where a batch that passes
  // every check starts, if any: tells damage in the middle of a segment
  // (valid batches follow) from a torn tail (nothing valid follows).
  Result<std::optional<uint64_t>> FindNextValidBatch(uint64_t from);

  Result<uint64_t> FileSize() { return file_->Size(); }
  bool mapped() const { return map_ != nullptr; }
  // While held, keeps the bytes of batches read from the map readable (also
  // after this reader is closed); null when not mapped. Batch bytes read
  // through the buffer are valid only until the next call.
  std::shared_ptr<const void> map_owner() const { return map_; }
  // Forgets buffered bytes, so the next read sees the file as it is now.
  void Invalidate() {
    window_length_ = 0;
    known_size_ = 0;
  }

 private:
  SegmentReader(std::unique_ptr<RandomAccessFile> file, Offset base, size_t buffer_bytes);
  bool InWindow(uint64_t position, uint64_t n) const {
    return position >= window_position_ && position + n <= window_position_ + window_length_;
  }
  // Up to n bytes at `position` (fewer only at the end of the file), from the
  // map or the buffer. When the buffer lacks them it is refilled from
  // `position` with `fill` bytes (at least n). The span is valid until the
  // next call.
  Result<std::span<const uint8_t>> Bytes(uint64_t position, size_t n, size_t fill);
  // Whether the file holds at least `end` bytes (asks the file system only
  // when the map or the size seen last is shorter).
  Result<bool> Holds(uint64_t end);

  std::unique_ptr<RandomAccessFile> file_;
  std::shared_ptr<const MappedFile> map_;
  Offset base_;
  std::string header_problem_;
  std::string problem_;
  std::unique_ptr<uint8_t[]> buffer_;
  size_t capacity_;
  uint64_t window_position_ = 0;
  size_t window_length_ = 0;
  uint64_t known_size_ = 0;  // the file had at least this many bytes
};

}  // namespace tokenfeed::log
