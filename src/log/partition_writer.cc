#include "log/partition_writer.h"

#include <unistd.h>

#include <chrono>

#include "base/crc32c.h"
#include "log/batch_access.h"
#include "log/log_format.h"
#include "log/partition_recovery.h"
#include "log/partition_tail.h"
#include "log/recovery_point.h"
#include "log/segment_reader.h"
#include "log/segment_scan.h"

namespace tokenfeed::log {

namespace f = format;
using Clock = std::chrono::steady_clock;

namespace {

std::string Num(uint64_t v) { return std::to_string(v); }

std::span<const uint8_t> AsBytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

int64_t UnixMillisNow() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class PartitionWriterImpl final : public PartitionWriter {
 public:
  PartitionWriterImpl(FileSystem* fs, PartitionLayout layout, const TopicOptions& topic, const WriterOptions& options)
      : fs_(fs), layout_(std::move(layout)), topic_(topic), options_(options) {}

  Status Open() {
    Result<std::unique_ptr<FileLock>> lock = fs_->LockFile(layout_.LockPath(), LockHolderDescription());
    if (!lock.ok()) {
      if (lock.status().code() == StatusCode::kBusy) {
        return Status::Busy(layout_.Label() + " already has a writer (" + lock.status().message() +
                            "). Only one writer per partition may run at a time: stop the other one, or write to "
                            "another partition");
      }
      if (lock.status().IsNotFound()) {
        return Status::NotFound(layout_.Label() + ": its directory '" + layout_.dir + "' is missing");
      }
      return lock.status().WithContext(layout_.Label());
    }
    lock_ = std::move(lock).value();

    TF_ASSIGN_OR_RETURN(RecoveredPartition r,
                        RecoverPartition(fs_, layout_, topic_.index_interval_bytes, options_.discard_after_damage));
    report_ = std::move(r.report);
    active_base_ = r.active_base;
    active_size_ = r.active_size;
    end_offset_ = r.end_offset;
    index_entries_ = std::move(r.active_index);
    last_indexed_position_ = r.last_indexed_position;
    last_batch_ = r.last_batch;

    TF_ASSIGN_OR_RETURN(segment_, fs_->OpenWritable(layout_.SegmentPath(active_base_), FileSystem::WriteMode::kAppend));
    if (segment_->Size() != active_size_) {
      return Status::Internal(layout_.Label() + ": segment '" + segment_->path() + "' is " + Num(segment_->Size()) +
                              " bytes after recovery, expected " + Num(active_size_));
    }
    // What recovery kept may be only in the page cache (a killed writer's
    // last batches): durable first, then named as the recovery point.
    TF_RETURN_IF_ERROR(segment_->Sync().WithContext(layout_.Label() + ": syncing segment '" + segment_->path() +
                                                    "' after recovery"));
    TF_RETURN_IF_ERROR(recovery_point_.Start(fs_, layout_.RecoveryPointPath(), {active_base_, active_size_})
                           .WithContext(layout_.Label()));
    RewriteActiveIndex();
    last_sync_ = Clock::now();
    return Status::OK();
  }

  Result<AppendResult> Append(BatchBuilder* batch) override {
    TF_RETURN_IF_ERROR(CheckUsable());
    if (batch->empty()) return Status::InvalidArgument(layout_.Label() + ": cannot append an empty batch");
    const size_t size = batch->size_bytes();
    if (size > f::kMaxBatchBytes) {
      return Status::InvalidArgument(layout_.Label() + ": a batch of " + Num(size) + " bytes is larger than the " +
                                     Num(f::kMaxBatchBytes) + "-byte limit; append smaller batches");
    }
    if (active_size_ > f::kSegmentHeaderSize && active_size_ + size > topic_.segment_bytes) TF_RETURN_IF_ERROR(Roll());

    const std::span<uint8_t> bytes = BatchBuilderAccess::Bytes(*batch);
    f::BatchHeader h;
    h.batch_length = static_cast<uint32_t>(size);
    h.record_count = batch->record_count();
    h.base_offset = end_offset_;
    h.append_time_unix_ms = UnixMillisNow();
    h.data_crc = crc32c::Value(bytes.data() + f::kBatchHeaderSize, size - f::kBatchHeaderSize);
    f::EncodeBatchHeader(h, bytes.data());

    const uint64_t position = active_size_;
    Status s = segment_->Append(bytes);
    if (!s.ok()) {
      const std::string what = layout_.Label() + ": writing a batch of " + Num(h.record_count) + " records (offset " +
                               ToString(h.base_offset) + ") to segment '" + segment_->path() + "' at position " +
                               Num(position) + " failed";
      Status cut = segment_->Truncate(position);
      if (!cut.ok()) {
        return Fail(s.WithContext(what + ", and cutting the partial batch off failed too (" + cut.message() +
                                  "); the writer stops: reopen it, recovery removes the partial batch"));
      }
      return s.WithContext(what + "; nothing of the batch was kept" +
                           (s.code() == StatusCode::kResourceExhausted ? ". Free disk space, then retry the append"
                                                                         : ""));
    }
    active_size_ += size;
    end_offset_ = h.end_offset();
    last_batch_ = BatchLocation{active_base_, position};
    unsynced_bytes_ += size;
    if (WantsIndexEntry(position, last_indexed_position_, topic_.index_interval_bytes)) {
      AddIndexEntry({h.base_offset, position});
    }

    AppendResult result{h.base_offset, h.record_count, false};
    const bool sync_now =
        options_.fsync == FsyncPolicy::kEachBatch ||
        (options_.fsync == FsyncPolicy::kInterval &&
         (unsynced_bytes_ >= options_.fsync_interval_bytes ||
          Clock::now() - last_sync_ >= std::chrono::milliseconds(options_.fsync_interval_ms)));
    if (sync_now) {
      TF_RETURN_IF_ERROR(Sync());
      result.durable = true;
    }
    return result;
  }

  Status Sync() override {
    TF_RETURN_IF_ERROR(CheckUsable());
    Status s = segment_->Sync();
    if (!s.ok()) {
      // After a failed fsync the kernel may have dropped the dirty pages, so
      // retrying could report success for lost data: stop instead.
      return Fail(s.WithContext(layout_.Label() + ": syncing segment '" + segment_->path() +
                                "' failed; batches appended since the last good sync may not be durable. The writer "
                                "stops: reopen it (recovery keeps what the disk holds)"));
    }
    unsynced_bytes_ = 0;
    last_sync_ = Clock::now();
    recovery_point_.Note({active_base_, active_size_});
    return Status::OK();
  }

  Status Close() override {
    if (closed_) return Status::OK();
    Status s = failed_.ok() ? Sync() : failed_;
    if (s.ok()) (void)recovery_point_.Sync();  // a hint: the next open works without it
    recovery_point_.Close();
    if (index_) (void)index_->Close();
    index_.reset();
    if (segment_) {
      Status c = segment_->Close();
      if (s.ok()) s = c;
    }
    segment_.reset();
    lock_.reset();
    closed_ = true;
    return s;
  }

  PartitionId partition() const override { return layout_.partition; }
  Offset end_offset() const override { return end_offset_; }
  const RecoveryReport& recovery() const override { return report_; }

  Result<std::optional<StoredRecord>> ReadLastRecord() override {
    if (!last_batch_) return std::optional<StoredRecord>();
    TF_ASSIGN_OR_RETURN(StoredRecord r, ReadLastRecordOfBatch(fs_, layout_, *last_batch_));
    return std::optional<StoredRecord>(std::move(r));
  }

 private:
  Status CheckUsable() const {
    if (closed_) return Status::InvalidArgument(layout_.Label() + ": the writer is closed");
    if (!failed_.ok()) return failed_;
    return Status::OK();
  }

  Status Fail(Status s) {
    failed_ = s;
    return s;
  }

  // The active segment's index is rebuilt by every open from the recovery
  // scan: cheaper than proving the old file right after a crash.
  void RewriteActiveIndex() {
    index_.reset();
    Result<std::unique_ptr<WritableFile>> file =
        fs_->OpenWritable(layout_.IndexPath(active_base_), FileSystem::WriteMode::kTruncate);
    index_ok_ = file.ok() && (*file)->Append(AsBytes(SegmentIndex::Encode(active_base_, index_entries_))).ok();
    if (index_ok_) index_ = std::move(file).value();
  }

  void AddIndexEntry(IndexEntry e) {
    index_entries_.push_back(e);
    last_indexed_position_ = e.position;
    if (!index_ok_) return;
    uint8_t buf[f::kIndexEntrySize];
    SegmentIndex::EncodeEntry(active_base_, e, buf);
    // The index is a hint: when it cannot be written, seeks scan further
    // and the next open (or the seal) writes it again.
    if (!index_->Append(buf).ok()) index_ok_ = false;
  }

  // Seals the active segment and starts the next one. Order matters for
  // crashes: the sealed segment and its index are durable before the new
  // file exists, and the new file's header and directory entry are durable
  // before any batch goes into it, so recovery only ever meets a complete
  // sealed segment and, at worst, a new segment without a header (removed).
  Status Roll() {
    const std::string sealing = layout_.Label() + ": sealing segment '" + segment_->path() + "'";
    if (Status s = segment_->Sync(); !s.ok()) return Fail(s.WithContext(sealing + "; reopen the writer"));
    unsynced_bytes_ = 0;
    if (!index_ok_ || !index_->Sync().ok()) {
      // Best effort: a missing or short sealed index is rebuilt by the next open.
      (void)WriteFileAtomically(fs_, layout_.IndexPath(active_base_), SegmentIndex::Encode(active_base_, index_entries_));
    }
    if (index_) (void)index_->Close();
    index_.reset();
    if (Status s = segment_->Close(); !s.ok()) return Fail(s.WithContext(sealing + "; reopen the writer"));
    segment_.reset();

    const Offset base = end_offset_;
    const std::string starting = layout_.Label() + ": starting segment '" + layout_.SegmentPath(base) + "'";
    Result<std::unique_ptr<WritableFile>> file =
        fs_->OpenWritable(layout_.SegmentPath(base), FileSystem::WriteMode::kCreateNew);
    if (!file.ok()) return Fail(file.status().WithContext(starting + "; reopen the writer"));
    uint8_t header[f::kSegmentHeaderSize];
    f::EncodeFileHeader(f::kSegmentMagic, f::kSegmentVersion, base, header);
    Status s = (*file)->Append(header);
    if (s.ok()) s = (*file)->Sync();
    if (s.ok()) s = fs_->SyncDir(layout_.dir);
    if (!s.ok()) return Fail(s.WithContext(starting + "; reopen the writer"));
    segment_ = std::move(file).value();
    active_base_ = base;
    active_size_ = f::kSegmentHeaderSize;
    // Durable with the new segment: without a recovery point for it, the
    // next open could not tell its torn tail from damage.
    recovery_point_.Note({active_base_, active_size_});
    (void)recovery_point_.Sync();
    index_entries_.clear();
    last_indexed_position_ = f::kSegmentHeaderSize;
    RewriteActiveIndex();
    last_sync_ = Clock::now();
    return Status::OK();
  }

  FileSystem* const fs_;
  const PartitionLayout layout_;
  const TopicOptions topic_;
  const WriterOptions options_;
  std::unique_ptr<FileLock> lock_;
  std::unique_ptr<WritableFile> segment_;
  std::unique_ptr<WritableFile> index_;
  bool index_ok_ = false;
  Offset active_base_;
  uint64_t active_size_ = 0;
  Offset end_offset_;
  std::vector<IndexEntry> index_entries_;
  uint64_t last_indexed_position_ = 0;
  std::optional<BatchLocation> last_batch_;
  uint64_t unsynced_bytes_ = 0;
  Clock::time_point last_sync_;
  Status failed_;
  bool closed_ = false;
  RecoveryReport report_;
  RecoveryPointWriter recovery_point_;
};

}  // namespace

std::string LockHolderDescription() {
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  return "pid " + std::to_string(::getpid()) + " on host " + (host[0] != '\0' ? host : "?");
}

Result<std::unique_ptr<PartitionWriter>> OpenPartitionWriter(FileSystem* fs, const PartitionLayout& layout,
                                                             const TopicOptions& topic, const WriterOptions& options) {
  auto writer = std::make_unique<PartitionWriterImpl>(fs, layout, topic, options);
  TF_RETURN_IF_ERROR(writer->Open());
  return std::unique_ptr<PartitionWriter>(std::move(writer));
}

}  // namespace tokenfeed::log
