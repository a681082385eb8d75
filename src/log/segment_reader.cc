#include "log/segment_reader.h"

#include <algorithm>

#include "base/little_endian.h"

namespace tokenfeed::log {

namespace f = format;

namespace {
constexpr size_t kPresenceFillBytes = 64 << 10;
}  // namespace

SegmentReader::SegmentReader(std::unique_ptr<RandomAccessFile> file, Offset base, size_t buffer_bytes)
    : file_(std::move(file)), base_(base), capacity_(std::max<size_t>(buffer_bytes, 4096)) {}

Result<std::unique_ptr<SegmentReader>> SegmentReader::Open(FileSystem* fs, const std::string& path, Offset base,
                                                           size_t buffer_bytes, Access access) {
  TF_ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> file, fs->OpenReadable(path));
  std::unique_ptr<SegmentReader> r(new SegmentReader(std::move(file), base, buffer_bytes));
  if (access == Access::kMap) {
    Result<std::unique_ptr<MappedFile>> map = r->file_->MapReadOnly();
    if (map.ok()) r->map_ = std::move(map).value();
  }
  TF_ASSIGN_OR_RETURN(std::span<const uint8_t> header, r->Bytes(0, f::kSegmentHeaderSize, f::kSegmentHeaderSize));
  if (header.size() < f::kSegmentHeaderSize) {
    r->header_problem_ = "the file is " + std::to_string(header.size()) + " bytes, too short for the " +
                         std::to_string(f::kSegmentHeaderSize) + "-byte segment header";
  } else {
    r->header_problem_ = f::CheckFileHeader(f::kSegmentMagic, f::kSegmentVersion, base, header.data());
    const uint32_t version = LoadLittleEndian<uint32_t>(header.data() + 8);
    if (!r->header_problem_.empty() && version > f::kSegmentVersion &&
        f::CheckFileHeader(f::kSegmentMagic, version, base, header.data()).empty()) {
      return Status::Unsupported("segment '" + path + "' has format version " + std::to_string(version) +
                                 ", newer than this build reads (version " + std::to_string(f::kSegmentVersion) +
                                 "): upgrade tokenfeed to read this topic");
    }
  }
  return r;
}

Result<std::span<const uint8_t>> SegmentReader::Bytes(uint64_t position, size_t n, size_t fill) {
  if (map_ != nullptr) {
    const std::span<const uint8_t> all = map_->bytes();
    if (position + n <= all.size()) return all.subspan(position, n);
    // Past the end of the map. A segment believed sealed can still grow: a
    // crash while starting its successor leaves that file without a
    // header, recovery removes it, and appends continue here. Then read on
    // with pread.
    TF_ASSIGN_OR_RETURN(uint64_t size, file_->Size());
    if (size <= all.size()) {
      if (position >= all.size()) return std::span<const uint8_t>();
      return all.subspan(position, all.size() - position);
    }
    map_.reset();
  }
  if (!InWindow(position, n)) {
    fill = std::max(fill, n);
    if (fill > capacity_) {
      // A batch larger than the buffer makes it grow for good: this reader
      // will likely meet more of them.
      capacity_ = std::max(fill, capacity_ * 2);
      buffer_.reset();
    }
    if (buffer_ == nullptr) buffer_.reset(new uint8_t[capacity_]);  // default-initialised: not zeroed
    window_position_ = position;
    window_length_ = 0;
    TF_ASSIGN_OR_RETURN(size_t got, file_->ReadAt(position, {buffer_.get(), fill}));
    window_length_ = got;
  }
  const size_t start = static_cast<size_t>(position - window_position_);
  return std::span<const uint8_t>(buffer_.get() + start, std::min(n, window_length_ - start));
}

Result<bool> SegmentReader::Holds(uint64_t end) {
  if (map_ != nullptr && end <= map_->bytes().size()) return true;
  if (end <= known_size_) return true;
  TF_ASSIGN_OR_RETURN(known_size_, file_->Size());
  return end <= known_size_;
}

Result<SegmentReader::Outcome> SegmentReader::ReadAt(uint64_t position, Check check, Batch* batch) {
  problem_.clear();
  // A walk over batches reads headers only: fill the buffer with less than
  // a whole large batch.
  const size_t head_fill = check == Check::kPresence ? std::min<size_t>(capacity_, kPresenceFillBytes) : capacity_;
  TF_ASSIGN_OR_RETURN(std::span<const uint8_t> head, Bytes(position, f::kBatchHeaderSize, head_fill));
  if (head.empty()) return Outcome::kEnd;
  if (head.size() < f::kBatchHeaderSize) {
    problem_ = "only " + std::to_string(head.size()) + " bytes of a batch header are in the file";
    return Outcome::kIncomplete;
  }
  f::BatchHeader h;
  std::string bad = f::DecodeBatchHeader(head.data(), &h);
  if (!bad.empty()) {
    problem_ = std::move(bad);
    return Outcome::kDamaged;
  }
  // The length is checked against the file's size before any buffer is
  // sized by it: a header is only 40 bytes, and one that claims 1 GiB in a
  // 4 KiB file must not make a reader allocate 1 GiB.
  TF_ASSIGN_OR_RETURN(bool whole, Holds(position + h.batch_length));
  if (!whole) {
    problem_ = "the batch's " + std::to_string(h.batch_length) + " bytes are not all in the file";
    // The header may have come from the buffer, and a crashed writer's torn
    // batch can since have been cut and written anew with another length
    // (possibly one the file never reaches): the next look reads the file
    // as it is then, not the header kept here.
    Invalidate();
    return Outcome::kIncomplete;
  }
  if (check == Check::kPresence) {
    batch->header = h;
    batch->position = position;
    batch->bytes = {};
    return Outcome::kBatch;
  }
  // A large batch is read on its own, plus the next header: filling the
  // whole buffer would end inside the next large batch, which would then be
  // read again from its start. Small batches fill the buffer many at a time.
  const size_t fill = h.batch_length >= capacity_ / 8 ? h.batch_length + f::kBatchHeaderSize : capacity_;
  TF_ASSIGN_OR_RETURN(std::span<const uint8_t> bytes, Bytes(position, h.batch_length, fill));
  // Decode again from what this read returned: a refill sees the file as it
  // is now, and a crashed writer's torn batch may have been replaced since.
  if (bytes.size() >= f::kBatchHeaderSize) bad = f::DecodeBatchHeader(bytes.data(), &h);
  if (!bad.empty()) {
    problem_ = std::move(bad);
    return Outcome::kDamaged;
  }
  if (bytes.size() < h.batch_length) {
    problem_ = "only " + std::to_string(bytes.size()) + " of the batch's " + std::to_string(h.batch_length) +
               " bytes are in the file";
    return bytes.empty() ? Outcome::kEnd : Outcome::kIncomplete;
  }
  bytes = bytes.first(h.batch_length);
  if (check != Check::kHeader) {
    bad = f::CheckBatchBody(bytes, h, check == Check::kChecksum);
    if (!bad.empty()) {
      problem_ = std::move(bad);
      return Outcome::kDamaged;
    }
  }
  batch->header = h;
  batch->position = position;
  batch->bytes = bytes;
  return Outcome::kBatch;
}

Result<std::optional<uint64_t>> SegmentReader::FindNextValidBatch(uint64_t from) {
  uint64_t q = (from + f::kRecordAlignment - 1) / f::kRecordAlignment * f::kRecordAlignment;
  for (;;) {
    TF_ASSIGN_OR_RETURN(std::span<const uint8_t> chunk, Bytes(q, capacity_, capacity_));
    if (chunk.size() < f::kBatchHeaderSize) return std::optional<uint64_t>();
    std::optional<uint64_t> candidate;
    size_t i = 0;
    for (; i + f::kBatchHeaderSize <= chunk.size(); i += f::kRecordAlignment) {
      if (LoadLittleEndian<uint32_t>(chunk.data() + i) != f::kBatchMagic) continue;
      f::BatchHeader h;
      if (f::DecodeBatchHeader(chunk.data() + i, &h).empty()) {
        candidate = q + i;
        break;
      }
    }
    if (!candidate) {
      q += i;
      continue;
    }
    Batch b;
    TF_ASSIGN_OR_RETURN(Outcome outcome, ReadAt(*candidate, Check::kChecksum, &b));
    if (outcome == Outcome::kBatch) return candidate;
    q = *candidate + f::kRecordAlignment;
  }
}

}  // namespace tokenfeed::log
