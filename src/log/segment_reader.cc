#include "log/segment_reader.h"

#include <algorithm>

#include "base/little_endian.h"

namespace tokenfeed::log {

namespace f = format;

SegmentReader::SegmentReader(std::unique_ptr<RandomAccessFile> file, Offset base, size_t buffer_bytes)
    : file_(std::move(file)),
      base_(base),
      buffer_(new uint8_t[std::max<size_t>(buffer_bytes, 4096)]),
      capacity_(std::max<size_t>(buffer_bytes, 4096)) {}

Result<std::unique_ptr<SegmentReader>> SegmentReader::Open(FileSystem* fs, const std::string& path, Offset base,
                                                           size_t buffer_bytes) {
  TF_ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> file, fs->OpenReadable(path));
  std::unique_ptr<SegmentReader> r(new SegmentReader(std::move(file), base, buffer_bytes));
  uint8_t header[f::kSegmentHeaderSize];
  TF_ASSIGN_OR_RETURN(size_t n, r->file_->ReadAt(0, header));
  if (n < f::kSegmentHeaderSize) {
    r->header_problem_ = "the file is " + std::to_string(n) + " bytes, too short for the " +
                         std::to_string(f::kSegmentHeaderSize) + "-byte segment header";
  } else {
    r->header_problem_ = f::CheckFileHeader(f::kSegmentMagic, f::kSegmentVersion, base, header);
  }
  return r;
}

Status SegmentReader::Fill(uint64_t position, size_t n) {
  n = std::min(n, capacity_);
  window_position_ = position;
  window_length_ = 0;
  TF_ASSIGN_OR_RETURN(size_t got, file_->ReadAt(position, {buffer_.get(), n}));
  window_length_ = got;
  return Status::OK();
}

Result<SegmentReader::Outcome> SegmentReader::ReadAt(uint64_t position, bool verify_crc, Batch* batch) {
  problem_.clear();
  if (!InWindow(position, f::kBatchHeaderSize)) {
    TF_RETURN_IF_ERROR(Fill(position, capacity_));
    if (window_length_ == 0) return Outcome::kEnd;
    if (window_length_ < f::kBatchHeaderSize) {
      problem_ = "only " + std::to_string(window_length_) + " bytes of a batch header are in the file";
      return Outcome::kIncomplete;
    }
  }
  f::BatchHeader h;
  std::string bad = f::DecodeBatchHeader(buffer_.get() + (position - window_position_), &h);
  if (!bad.empty()) {
    problem_ = std::move(bad);
    return Outcome::kDamaged;
  }
  if (!InWindow(position, h.batch_length)) {
    if (h.batch_length > capacity_) {
      // Batches larger than the buffer make it grow for good: this reader
      // will likely meet more of them.
      capacity_ = std::max<size_t>(h.batch_length, capacity_ * 2);
      buffer_.reset(new uint8_t[capacity_]);
      window_length_ = 0;
    }
    TF_RETURN_IF_ERROR(Fill(position, capacity_));
    // Decode again: what is in the file now is what counts (a crashed
    // writer's torn batch may have been replaced since the first look).
    if (window_length_ < f::kBatchHeaderSize) {
      problem_ = "only " + std::to_string(window_length_) + " bytes of a batch header are in the file";
      return window_length_ == 0 ? Outcome::kEnd : Outcome::kIncomplete;
    }
    bad = f::DecodeBatchHeader(buffer_.get(), &h);
    if (!bad.empty()) {
      problem_ = std::move(bad);
      return Outcome::kDamaged;
    }
    if (window_length_ < h.batch_length) {
      problem_ = "only " + std::to_string(window_length_) + " of the batch's " + std::to_string(h.batch_length) +
                 " bytes are in the file";
      return Outcome::kIncomplete;
    }
  }
  const std::span<const uint8_t> bytes(buffer_.get() + (position - window_position_), h.batch_length);
  bad = f::CheckBatchBody(bytes, h, verify_crc);
  if (!bad.empty()) {
    problem_ = std::move(bad);
    return Outcome::kDamaged;
  }
  batch->header = h;
  batch->position = position;
  batch->bytes = bytes;
  return Outcome::kBatch;
}

Result<std::optional<uint64_t>> SegmentReader::FindNextValidBatch(uint64_t from) {
  uint64_t q = (from + f::kRecordAlignment - 1) / f::kRecordAlignment * f::kRecordAlignment;
  for (;;) {
    TF_ASSIGN_OR_RETURN(uint64_t size, file_->Size());
    if (q + f::kBatchHeaderSize > size) return std::optional<uint64_t>();
    TF_RETURN_IF_ERROR(Fill(q, capacity_));
    if (window_length_ < f::kBatchHeaderSize) return std::optional<uint64_t>();
    std::optional<uint64_t> candidate;
    size_t i = 0;
    for (; i + f::kBatchHeaderSize <= window_length_; i += f::kRecordAlignment) {
      if (LoadLittleEndian<uint32_t>(buffer_.get() + i) != f::kBatchMagic) continue;
      f::BatchHeader h;
      if (f::DecodeBatchHeader(buffer_.get() + i, &h).empty()) {
        candidate = q + i;
        break;
      }
    }
    if (!candidate) {
      q += i;
      continue;
    }
    Batch b;
    TF_ASSIGN_OR_RETURN(Outcome outcome, ReadAt(*candidate, /*verify_crc=*/true, &b));
    if (outcome == Outcome::kBatch) return candidate;
    q = *candidate + f::kRecordAlignment;
  }
}

}  // namespace tokenfeed::log
