// What goes into and comes out of the embedded log: a BatchBuilder collects
// already-encoded records (opaque bytes, normally token records from
// record.h) into one contiguous batch that PartitionWriter::Append writes with
// a single write; a BatchView is one batch read back, whose records point into
// the reader's buffer without copying.
// Neither type does I/O. Thread-safety: one thread at a time per object.
// Lifetime: a BatchView and the LogRecords it yields are valid until the next
// call on the PartitionReader that returned it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "tokenfeed/ids.h"

namespace tokenfeed::log {

class BatchView;

// Builds one batch in memory. Reuse one builder for every batch (Clear()
// between them): its buffer keeps its capacity, so the hot path does not
// allocate once the buffer has grown to the batch size. A new builder
// allocates nothing until its first record.
class BatchBuilder {
 public:
  BatchBuilder();
  BatchBuilder(BatchBuilder&&) noexcept;
  BatchBuilder& operator=(BatchBuilder&&) noexcept;
  ~BatchBuilder();

  // Drops all records, keeps the memory.
  void Clear();
  // Copies one record into the batch.
  void Add(std::span<const uint8_t> record);
  void Add(std::string_view record) { Add({reinterpret_cast<const uint8_t*>(record.data()), record.size()}); }
  // Reserves `size` bytes for one record and returns where to write them, so
  // a record can be encoded in place (RecordEncoder::WriteTo). The pointer is
  // valid until the next call on this builder; it is 4-byte aligned.
  uint8_t* AddUninitialized(size_t size);

  uint32_t record_count() const { return count_; }
  bool empty() const { return count_ == 0; }
  // The size of the batch as stored, header included.
  size_t size_bytes() const { return size_; }
  // The size of the batch as stored after adding a record of `record_size`
  // bytes (its length field and padding included), without overflowing: a
  // writer compares it with kMaxBytes before AddUninitialized.
  uint64_t size_bytes_with(size_t record_size) const;
  // The largest batch PartitionWriter::Append takes.
  static constexpr uint64_t kMaxBytes = uint64_t{1} << 30;
  // The records added so far, offsets counted from 0 (no append time): for a
  // caller that looks at a batch it has just appended, before Clear(). Valid
  // until the next call that changes this builder.
  BatchView records() const;

 private:
  friend struct BatchBuilderAccess;
  uint8_t* Grow(size_t n);

  std::unique_ptr<uint8_t[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
  uint32_t count_ = 0;
};

// One stored record: its offset and its bytes (inside the reader's buffer).
struct LogRecord {
  Offset offset;
  std::span<const uint8_t> bytes;

  std::string_view as_string_view() const {
    return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
  }
};

// The records of one stored batch from first_offset() on (a reader that was
// positioned inside a batch starts the view at that offset). Empty when a
// read found nothing new within its wait.
class BatchView {
 public:
  BatchView() = default;

  bool empty() const { return count_ == 0; }
  uint32_t size() const { return count_; }
  Offset first_offset() const { return first_; }
  // The offset after the last record of the view.
  Offset end_offset() const { return first_ + count_; }
  // When the writer appended the batch (milliseconds since 1970, its clock).
  int64_t append_time_unix_ms() const { return append_time_unix_ms_; }

  // Walks the entries, never past the end of the batch's bytes nor past its
  // last record, even if those bytes changed after they were checked (a
  // segment overwritten in place under a reader): a record never reaches
  // outside the batch.
  class Iterator {
   public:
    Iterator(const uint8_t* p, const uint8_t* end, Offset offset, Offset end_offset)
        : p_(p), end_(end), offset_(offset), end_offset_(end_offset) {}
    LogRecord operator*() const;
    Iterator& operator++();
    bool operator==(const Iterator& o) const { return p_ == o.p_; }

   private:
    const uint8_t* p_;
    const uint8_t* end_;
    Offset offset_;
    Offset end_offset_;
  };
  Iterator begin() const { return {count_ == 0 ? end_ : begin_, end_, first_, end_offset()}; }
  Iterator end() const { return {end_, end_, end_offset(), end_offset()}; }

 private:
  friend struct BatchViewAccess;
  const uint8_t* begin_ = nullptr;  // first entry of the view
  const uint8_t* end_ = nullptr;    // end of the batch
  Offset first_;
  uint32_t count_ = 0;
  int64_t append_time_unix_ms_ = 0;
};

}  // namespace tokenfeed::log
