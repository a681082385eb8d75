#include "log/partition_reader.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <span>
#include <thread>
#include <utility>

#include "log/batch_access.h"
#include "log/log_format.h"
#include "log/partition_tail.h"
#include "log/segment_index.h"
#include "log/segment_reader.h"
#include "log/segment_scan.h"

namespace tokenfeed::log {

namespace f = format;
using Clock = std::chrono::steady_clock;
using Outcome = SegmentReader::Outcome;

namespace {

std::string Num(uint64_t v) { return std::to_string(v); }

constexpr auto kFirstBackoff = std::chrono::microseconds(100);
constexpr auto kMaxBackoff = std::chrono::milliseconds(10);
constexpr auto kGapCheckInterval = std::chrono::seconds(1);

class PartitionReaderImpl final : public PartitionReader {
 public:
  PartitionReaderImpl(FileSystem* fs, PartitionLayout layout, const ReaderOptions& options)
      : fs_(fs), layout_(std::move(layout)), options_(options) {}

  Status Start() {
    TF_ASSIGN_OR_RETURN(std::vector<Offset> segments, ListSegments(fs_, layout_));
    if (segments.empty()) {
      return Status::Corruption(layout_.Label() + ": its directory '" + layout_.dir +
                                "' holds no segment file; the partition is damaged");
    }
    return Seek(segments.front());
  }

  Status Seek(Offset target) override {
    last_owner_.reset();
    // Within the segment being read, no file is listed or opened again: a
    // shuffled loader seeks at every block, mostly inside the segment it
    // read last. A sealed segment holds the offsets below its successor's
    // base; the active one at least those read so far, and a scan finds out
    // whether it holds a later target (else the files are listed).
    if (segment_ != nullptr && target >= segment_->base_offset() && !(segment_end_ && target >= *segment_end_)) {
      if (target == next_) return Status::OK();
      // The active segment's index grows with it: load it again to jump ahead.
      if (!index_tried_ || (!segment_end_ && target > next_)) LoadIndex();
      TF_ASSIGN_OR_RETURN(SegmentScan scan, ScanSegment(segment_.get(), index_ ? &*index_ : nullptr, target,
                                                        SegmentReader::Check::kPresence));
      if (scan.found) {
        position_ = scan.position;
        next_ = target;
        return Status::OK();
      }
      if (target < next_ || segment_end_) {
        // The segment holds less than it did (or than its successor says).
        return SegmentCorruption(segment_->path(), scan.position, scan.offset,
                                 scan.problem.empty() ? "offset " + ToString(target) + " is not in this segment"
                                                      : scan.problem);
      }
      // The active segment ends before the target: look at the files.
    }
    TF_ASSIGN_OR_RETURN(std::vector<Offset> segments, ListSegments(fs_, layout_));
    if (segments.empty() || target < segments.front()) {
      return Status::OutOfRange(layout_.Label() + ": offset " + ToString(target) +
                                " is before the partition's start offset " +
                                (segments.empty() ? std::string("(no segments)") : ToString(segments.front())));
    }
    auto it = std::upper_bound(segments.begin(), segments.end(), target);
    std::unique_ptr<SegmentReader> reader;
    for (;;) {
      const Offset base = *std::prev(it);
      TF_ASSIGN_OR_RETURN(reader, OpenSegment(base, /*sealed=*/it != segments.end()));
      if (reader->header_problem().empty()) break;
      TF_ASSIGN_OR_RETURN(uint64_t size, reader->FileSize());
      // A segment the writer is starting right now has no header yet: what
      // precedes it is still the end of the data.
      if (size >= f::kSegmentHeaderSize || std::prev(it) == segments.begin() || it != segments.end()) {
        return SegmentCorruption(reader->path(), 0, base, reader->header_problem());
      }
      --it;
    }
    Result<SegmentIndex> index = SegmentIndex::Load(fs_, layout_.IndexPath(reader->base_offset()), reader->base_offset());
    // Only batch headers on the way: Read checks the batch it returns.
    TF_ASSIGN_OR_RETURN(SegmentScan scan, ScanSegment(reader.get(), index.ok() ? &*index : nullptr, target,
                                                      SegmentReader::Check::kPresence));
    if (!scan.found) {
      if (scan.stop == Outcome::kDamaged) return SegmentCorruption(reader->path(), scan.position, scan.offset, scan.problem);
      if (target != scan.offset) {
        return Status::OutOfRange(layout_.Label() + ": offset " + ToString(target) + " is past the end offset " +
                                  ToString(scan.offset) + "; seek to at most the end offset");
      }
    }
    segment_ = std::move(reader);
    segment_end_ = it != segments.end() ? std::optional<Offset>(*it) : std::nullopt;
    index_ = index.ok() ? std::optional<SegmentIndex>(std::move(index).value()) : std::nullopt;
    index_tried_ = true;
    position_ = scan.position;
    next_ = target;
    return Status::OK();
  }

  Result<BatchView> Read(std::chrono::milliseconds wait) override {
    const Clock::time_point deadline = Clock::now() + wait;
    auto backoff = std::chrono::duration_cast<Clock::duration>(kFirstBackoff);
    bool looked_again = false;
    last_owner_.reset();
    for (;;) {
      SegmentReader::Batch batch;
      const std::pair<uint64_t, uint64_t> where{segment_->base_offset().value(), position_};
      auto known = verified_.find(where);
      // A batch checked before is read whole from a map (no copy), but only
      // in part through the buffer (the active segment): a loader's block
      // is a few hundred of its records, and each copy costs.
      const bool in_buffer = !segment_->mapped();
      const SegmentReader::Check check =
          known == verified_.end() ? FullCheck()
                                   : (in_buffer ? SegmentReader::Check::kPresence : SegmentReader::Check::kHeader);
      TF_ASSIGN_OR_RETURN(Outcome o, segment_->ReadAt(position_, check, &batch));
      if (o == Outcome::kBatch && known != verified_.end() && !known->second.Describes(batch.header)) {
        // Not the batch checked here before (a topic made again under the
        // same name, or a tail cut and written anew): check it in full.
        verified_.erase(known);
        known = verified_.end();
        TF_ASSIGN_OR_RETURN(o, segment_->ReadAt(position_, FullCheck(), &batch));
      }
      if (o == Outcome::kBatch && known != verified_.end() && in_buffer) {
        TF_ASSIGN_OR_RETURN(std::optional<BatchView> part, ReadPartOf(batch.header, known->second.marks));
        if (part) return std::move(*part);
        verified_.erase(known);  // the file is shorter than that now: look again, checking everything
        continue;
      }
      if (o == Outcome::kBatch) {
        if (known == verified_.end()) {
          if (verified_.size() >= kMaxVerified) verified_.clear();
          known = verified_
                      .emplace(where, Verified{batch.header, BatchViewAccess::MarkEntries(batch.bytes, batch.header)})
                      .first;
        }
        const f::BatchHeader& h = batch.header;
        TF_RETURN_IF_ERROR(CheckDense(h));
        const uint32_t skip = static_cast<uint32_t>(next_ - h.base_offset);
        last_owner_ = segment_->map_owner();  // null unless these bytes are in the map
        position_ += h.batch_length;
        next_ = h.end_offset();
        return BatchViewAccess::Make(batch.bytes, h, skip, known->second.marks);
      }
      if (o == Outcome::kDamaged) {
        // A crashed writer's torn batch, replaced by its successor while we
        // looked, can read as damaged once; a second look settles it.
        if (!looked_again) {
          looked_again = true;
          segment_->Invalidate();
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
          continue;
        }
        return SegmentCorruption(segment_->path(), position_, next_, segment_->problem());
      }
      if (o == Outcome::kEnd && next_ != segment_->base_offset()) {
        TF_ASSIGN_OR_RETURN(bool moved, MoveToNextSegment());
        if (moved) continue;
      }
      if (Clock::now() >= deadline) {
        TF_RETURN_IF_ERROR(CheckForGap(o));
        return BatchView();
      }
      std::this_thread::sleep_for(std::min(backoff, deadline - Clock::now()));
      backoff = std::min<Clock::duration>(backoff * 2, kMaxBackoff);
    }
  }

  Offset position() const override { return next_; }
  std::shared_ptr<const void> LastBatchOwner() const override { return last_owner_; }

  Result<Offset> EndOffset() override {
    TF_ASSIGN_OR_RETURN(PartitionTail tail, ReadPartitionTail(fs_, layout_, /*with_sizes=*/false));
    return tail.end_offset;
  }

  PartitionId partition() const override { return layout_.partition; }

 private:
  // A segment with a successor is sealed: the writer started the successor
  // only after its last write here, so it can be mapped and read without a
  // copy. The active segment is read with pread (see segment_reader.h).
  Result<std::unique_ptr<SegmentReader>> OpenSegment(Offset base, bool sealed) {
    return SegmentReader::Open(fs_, layout_.SegmentPath(base), base, options_.buffer_bytes,
                               sealed ? SegmentReader::Access::kMap : SegmentReader::Access::kRead);
  }

  // Records of a batch checked before, from the sought one to a few marks
  // on (or to the batch's end), read through the buffer without the rest of
  // the batch; the reader stays at the batch until a part reaches its end.
  // nullopt when the file no longer holds those bytes.
  Result<std::optional<BatchView>> ReadPartOf(const f::BatchHeader& h, const std::vector<uint32_t>& marks) {
    TF_RETURN_IF_ERROR(CheckDense(h));
    constexpr uint32_t kEvery = BatchViewAccess::kMarkEvery;
    const uint32_t skip = static_cast<uint32_t>(next_ - h.base_offset);
    const size_t m = std::min<size_t>(skip / kEvery, marks.size() - 1);
    const size_t end_mark = m + kPartMarks;
    const bool to_end = end_mark >= marks.size();
    const uint32_t from = marks[m], to = to_end ? h.batch_length : marks[end_mark];
    const uint32_t end_record = to_end ? h.record_count : static_cast<uint32_t>(end_mark * kEvery);
    TF_ASSIGN_OR_RETURN(std::span<const uint8_t> bytes, segment_->ReadPart(position_ + from, to - from));
    if (bytes.size() < to - from) return std::optional<BatchView>();
    BatchView v = BatchViewAccess::MakePart(bytes, static_cast<uint32_t>(m * kEvery), end_record, h, skip);
    if (to_end) position_ += h.batch_length;
    next_ = h.base_offset + end_record;
    return std::optional<BatchView>(v);
  }

  Status CheckDense(const f::BatchHeader& h) {
    if (h.base_offset > next_ || h.end_offset() <= next_) {
      return SegmentCorruption(segment_->path(), position_, next_,
                               "the batch here holds offsets " + ToString(h.base_offset) + " to " +
                                   ToString(h.end_offset()) + " but offset " + ToString(next_) +
                                   " comes next (offsets must be dense)");
    }
    return Status::OK();
  }

  SegmentReader::Check FullCheck() const {
    return options_.verify_checksums ? SegmentReader::Check::kChecksum : SegmentReader::Check::kRecords;
  }

  void LoadIndex() {
    index_tried_ = true;
    index_.reset();
    Result<SegmentIndex> index = SegmentIndex::Load(fs_, layout_.IndexPath(segment_->base_offset()), segment_->base_offset());
    if (index.ok()) index_ = std::move(index).value();
  }

  Status SegmentCorruption(const std::string& path, uint64_t position, Offset offset, const std::string& problem) {
    return Status::Corruption(layout_.Label() + ": segment '" + path + "' is damaged at file position " +
                              Num(position) + " (offset " + ToString(offset) + "): " + problem +
                              ". Reading stops here. If a writer crashed, reopening it cuts a torn tail; otherwise "
                              "restore the partition from a copy");
  }

  // At the end of the current segment: the writer starts the segment that
  // begins at our next offset only after its last write to this one, so
  // once that file exists, this segment is complete (after one more look).
  Result<bool> MoveToNextSegment() {
    const std::string next_path = layout_.SegmentPath(next_);
    Result<FileInfo> info = fs_->Stat(next_path);
    if (!info.ok()) {
      if (info.status().IsNotFound()) return false;
      return info.status().WithContext(layout_.Label());
    }
    if (info->size < f::kSegmentHeaderSize) return false;  // being started
    segment_->Invalidate();
    SegmentReader::Batch batch;
    TF_ASSIGN_OR_RETURN(Outcome again, segment_->ReadAt(position_, FullCheck(), &batch));
    if (again != Outcome::kEnd) return true;  // more data after all: read it first
    TF_ASSIGN_OR_RETURN(std::vector<Offset> segments, ListSegments(fs_, layout_));
    const bool sealed = !segments.empty() && segments.back() > next_;
    TF_ASSIGN_OR_RETURN(std::unique_ptr<SegmentReader> next, OpenSegment(next_, sealed));
    if (!next->header_problem().empty()) return SegmentCorruption(next_path, 0, next_, next->header_problem());
    segment_ = std::move(next);
    segment_end_.reset();
    if (sealed) segment_end_ = *std::upper_bound(segments.begin(), segments.end(), next_);
    index_.reset();
    index_tried_ = false;  // loaded by the first seek that needs it
    position_ = f::kSegmentHeaderSize;
    return true;
  }

  // A reader stuck at the end of a segment while later segments exist would
  // wait forever: report it. Cheap enough at most once a second.
  Status CheckForGap(Outcome o) {
    const Clock::time_point now = Clock::now();
    if (now - last_gap_check_ < kGapCheckInterval) return Status::OK();
    last_gap_check_ = now;
    TF_ASSIGN_OR_RETURN(std::vector<Offset> segments, ListSegments(fs_, layout_));
    if (segments.empty() || segments.back() <= segment_->base_offset()) return Status::OK();
    if (fs_->Stat(layout_.SegmentPath(next_)).ok()) return Status::OK();  // the next segment is being started
    segment_->Invalidate();
    SegmentReader::Batch batch;
    TF_ASSIGN_OR_RETURN(Outcome again, segment_->ReadAt(position_, FullCheck(), &batch));
    if (again == Outcome::kBatch) return Status::OK();
    if (fs_->Stat(layout_.SegmentPath(next_)).ok()) return Status::OK();
    return SegmentCorruption(segment_->path(), position_, next_,
                             std::string(o == Outcome::kIncomplete ? "a batch is cut short here"
                                                                   : "the segment's data ends here") +
                                 ", but a later segment (starting at offset " + ToString(segments.back()) +
                                 ") exists, so records are missing");
  }

  FileSystem* const fs_;
  const PartitionLayout layout_;
  const ReaderOptions options_;
  // Batches (segment base offset, file position) that this reader has
  // checked (records, and the checksum unless turned off). A batch's bytes
  // never change once written whole, and a shuffled reader comes back to the
  // same batch for each of its blocks, so each batch is checked once per
  // reader, not once per visit; a later visit reads its header only (which
  // has a checksum of its own) and checks the batch in full again only if
  // the header differs from the one remembered (the file was replaced, or a
  // cut tail written anew). With each, where every 64th of its records
  // starts (BatchViewAccess::MarkEntries: a block that starts in the middle
  // of a batch is found without walking the entries before it).
  struct Verified {
    f::BatchHeader header;
    std::vector<uint32_t> marks;
    bool Describes(const f::BatchHeader& h) const {
      return h.data_crc == header.data_crc && h.batch_length == header.batch_length &&
             h.record_count == header.record_count && h.base_offset == header.base_offset;
    }
  };
  std::map<std::pair<uint64_t, uint64_t>, Verified> verified_;
  // How many it remembers (for 1 MB batches of ~2,000 records, about 10 MB
  // of marks and tree nodes, for 64 GB of batches); past that it starts over.
  static constexpr size_t kMaxVerified = size_t{1} << 16;
  // How many marks (of 64 records) past the sought record's a part of a
  // batch read through the buffer spans (320 records: a loader's block of
  // 1024 takes four parts, each read without the rest of the batch).
  static constexpr size_t kPartMarks = 5;
  std::unique_ptr<SegmentReader> segment_;
  std::optional<Offset> segment_end_;  // segment_ is sealed: where its successor starts
  std::optional<SegmentIndex> index_;  // segment_'s, if it has a usable one
  bool index_tried_ = false;
  uint64_t position_ = 0;
  Offset next_;
  Clock::time_point last_gap_check_{};
  std::shared_ptr<const void> last_owner_;  // of the batch Read returned last
};

}  // namespace

Result<std::unique_ptr<PartitionReader>> OpenPartitionReader(FileSystem* fs, const PartitionLayout& layout,
                                                             const ReaderOptions& options) {
  auto reader = std::make_unique<PartitionReaderImpl>(fs, layout, options);
  TF_RETURN_IF_ERROR(reader->Start());
  return std::unique_ptr<PartitionReader>(std::move(reader));
}

}  // namespace tokenfeed::log
