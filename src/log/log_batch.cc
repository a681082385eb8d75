#include <algorithm>
#include <cstring>

#include "base/little_endian.h"
#include "log/batch_access.h"
#include "log/log_format.h"
#include "log/log_batch.h"

namespace tokenfeed::log {

namespace f = format;
static_assert(BatchBuilder::kMaxBytes == f::kMaxBatchBytes);

// No memory until the first record: a writer keeps a builder for each of
// its partitions, and may own many that it never writes.
BatchBuilder::BatchBuilder() : size_(f::kBatchHeaderSize) {}
BatchBuilder::BatchBuilder(BatchBuilder&& other) noexcept { *this = std::move(other); }

BatchBuilder& BatchBuilder::operator=(BatchBuilder&& other) noexcept {
  data_ = std::move(other.data_);
  size_ = other.size_;
  capacity_ = other.capacity_;
  count_ = other.count_;
  // The moved-from builder is empty and allocates again on its next use.
  other.size_ = f::kBatchHeaderSize;
  other.capacity_ = 0;
  other.count_ = 0;
  return *this;
}
BatchBuilder::~BatchBuilder() = default;

void BatchBuilder::Clear() {
  size_ = f::kBatchHeaderSize;  // the writer fills the header in place
  count_ = 0;
}

uint8_t* BatchBuilder::Grow(size_t n) {
  if (size_ + n > capacity_) {
    const size_t new_capacity = std::max({capacity_ * 2, size_ + n, size_t{64} << 10});
    // default-initialised: no memset of memory about to be overwritten
    std::unique_ptr<uint8_t[]> bigger(new uint8_t[new_capacity]);
    if (data_ != nullptr) std::memcpy(bigger.get(), data_.get(), size_);
    data_ = std::move(bigger);
    capacity_ = new_capacity;
  }
  uint8_t* p = data_.get() + size_;
  size_ += n;
  return p;
}

uint8_t* BatchBuilder::AddUninitialized(size_t size) {
  const size_t entry = f::EntrySize(size);
  uint8_t* p = Grow(entry);
  // Oversized records get a wrong length here, but Append refuses any batch
  // above kMaxBatchBytes before a byte of it is written.
  StoreLittleEndian<uint32_t>(p, static_cast<uint32_t>(std::min<size_t>(size, UINT32_MAX)));
  std::memset(p + f::kEntryLengthSize + size, 0, entry - f::kEntryLengthSize - size);
  ++count_;
  return p + f::kEntryLengthSize;
}

uint64_t BatchBuilder::size_bytes_with(size_t record_size) const {
  if (record_size > kMaxBytes) return UINT64_MAX;  // past any limit, and EntrySize cannot overflow
  return uint64_t{size_} + f::EntrySize(record_size);
}

void BatchBuilder::Add(std::span<const uint8_t> record) {
  uint8_t* p = AddUninitialized(record.size());
  if (!record.empty()) std::memcpy(p, record.data(), record.size());
}

namespace {

// The size of the entry at `p`, or 0 when it does not fit before `end` (bytes
// that changed after the batch was checked): every walk over entries stops
// there instead of leaving the batch.
size_t EntryAt(const uint8_t* p, const uint8_t* end) {
  const size_t left = static_cast<size_t>(end - p);
  if (left < f::kEntryLengthSize) return 0;
  const size_t entry = f::EntrySize(LoadLittleEndian<uint32_t>(p));
  return entry <= left ? entry : 0;
}

}  // namespace

LogRecord BatchView::Iterator::operator*() const {
  if (EntryAt(p_, end_) == 0) return {offset_, {}};
  const uint32_t len = LoadLittleEndian<uint32_t>(p_);
  return {offset_, {p_ + f::kEntryLengthSize, len}};
}

BatchView::Iterator& BatchView::Iterator::operator++() {
  const size_t entry = EntryAt(p_, end_);
  offset_ += 1;
  p_ = entry == 0 || offset_ >= end_offset_ ? end_ : p_ + entry;
  return *this;
}

BatchView BatchViewAccess::Make(std::span<const uint8_t> batch, const f::BatchHeader& h, uint32_t skip,
                                std::span<const uint32_t> marks) {
  // The walk to the first record starts at the nearest mark (or the first entry).
  const size_t m = marks.empty() ? 0 : std::min<size_t>(skip / kMarkEvery, marks.size() - 1);
  size_t from = marks.empty() ? f::kBatchHeaderSize : marks[m];
  uint32_t from_record = static_cast<uint32_t>(m * kMarkEvery);
  if (from > batch.size()) from = f::kBatchHeaderSize, from_record = 0;  // marks of other bytes: walk from the start
  return MakePart(batch.subspan(from), from_record, h.record_count, h, skip);
}

BatchView BatchViewAccess::MakePart(std::span<const uint8_t> part, uint32_t part_record, uint32_t end_record,
                                    const f::BatchHeader& h, uint32_t skip) {
  BatchView v;
  const uint8_t* p = part.data();
  const uint8_t* const end = part.data() + part.size();
  for (uint32_t i = part_record; i < skip; ++i) {
    const size_t entry = EntryAt(p, end);
    if (entry == 0) {
      p = end;  // the bytes changed since they were checked: an empty view, not a walk off the end
      break;
    }
    p += entry;
  }
  v.begin_ = p;
  v.end_ = end;
  v.first_ = h.base_offset + skip;
  v.count_ = p == end ? 0 : end_record - skip;
  v.append_time_unix_ms_ = h.append_time_unix_ms;
  return v;
}

BatchView BatchBuilder::records() const {
  if (count_ == 0) return BatchView();
  f::BatchHeader h;
  h.record_count = count_;
  return BatchViewAccess::MakePart({data_.get() + f::kBatchHeaderSize, size_ - f::kBatchHeaderSize}, 0, count_, h, 0);
}

std::vector<uint32_t> BatchViewAccess::MarkEntries(std::span<const uint8_t> batch, const f::BatchHeader& h) {
  std::vector<uint32_t> marks;
  marks.reserve(h.record_count / kMarkEvery + 1);
  const uint8_t* p = batch.data() + f::kBatchHeaderSize;
  const uint8_t* const end = batch.data() + batch.size();
  for (uint32_t i = 0; i < h.record_count; ++i) {
    if (i % kMarkEvery == 0) marks.push_back(static_cast<uint32_t>(p - batch.data()));
    const size_t entry = EntryAt(p, end);
    if (entry == 0) break;  // only for bytes that changed since they were checked
    p += entry;
  }
  return marks;
}

}  // namespace tokenfeed::log
