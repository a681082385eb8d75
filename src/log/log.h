// The embedded log: a topic of N partitions in a local directory
// (URI log:DIR/TOPIC), each an append-only sequence of record batches with
// dense offsets, as in Kafka but without a server. Format: docs/log_format.md.
//
// Visibility: a batch becomes visible to readers in any process, all of it
// at once, when PartitionWriter::Append writes it (before Append returns).
// Readers never see part of a batch, nor a batch whose checksum fails.
// Durability (survives a power cut), by WriterOptions::fsync:
//   kEachBatch  when Append returns (fdatasync of every batch);
//   kInterval   when a later Append or Sync() has synced it: Append syncs once
//               fsync_interval_ms have passed or fsync_interval_bytes are
//               unsynced, so while appends continue a power cut loses at most
//               about that much; an idle writer syncs only on Sync()/Close();
//   kNone       when the kernel writes it back, or on Sync()/Close().
// Every policy survives the writer process being killed: written batches are
// in the page cache. Sealing a segment (roll) and Close() always sync.
// Thread-safety: one PartitionWriter per partition on a machine (a lock file
// enforces it, across processes too); a writer and a reader are each used by
// one thread at a time. TopicDirectory's methods may be called from any
// thread. Any number of readers, in any processes, may read while a writer
// appends.
// Errors name the topic, partition, segment file, file position and offset.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "log/log_batch.h"
#include "tokenfeed/ids.h"
#include "tokenfeed/log_options.h"
#include "tokenfeed/status.h"

namespace tokenfeed {
class FileSystem;  // base/file_system.h; null means the real file system
}

namespace tokenfeed::log {

// log:DIR/TOPIC split into its parts; the topic lives in DIR/TOPIC/.
struct LogUri {
  std::string dir;
  std::string topic;
  std::string path() const;  // DIR/TOPIC
  std::string ToString() const { return "log:" + path(); }
};
// InvalidArgument (saying what a log URI looks like) for anything else.
// Topic names are 1-200 characters of [A-Za-z0-9._-], not starting with '.'.
Result<LogUri> ParseLogUri(std::string_view uri);

struct AppendResult {
  Offset base_offset;  // the batch's records got offsets [base_offset, end_offset())
  uint32_t record_count = 0;
  bool durable = false;  // synced before Append returned
  Offset end_offset() const { return base_offset + record_count; }
};

// What opening a writer repaired. A torn tail (bytes written after the last
// sync that a crash left partial, or a power cut left reordered or zeroed) is
// cut off; a segment file left empty by a crash while starting a new segment
// is removed. Damage to bytes that were synced is not repaired: the writer
// refuses to open (Corruption) unless discard_after_damage asks it to set the
// damaged bytes aside in quarantined_file and cut them off.
struct RecoveryReport {
  std::string truncated_segment;  // empty when nothing was cut
  uint64_t truncated_at_position = 0;
  uint64_t truncated_bytes = 0;
  std::string truncation_reason;
  bool damage = false;             // damage was discarded on request
  std::string quarantined_file;    // where the discarded bytes were kept
  std::vector<std::string> removed_segments;
  uint32_t rebuilt_indexes = 0;
  bool clean() const { return truncated_segment.empty() && removed_segments.empty() && !damage; }
  std::string ToString() const;
};

// A record copied out of the log.
struct StoredRecord {
  Offset offset;
  std::string bytes;
};

// Appends batches to one partition. Opening it takes the partition's lock
// and runs recovery (it reads the last segment once, checking every batch).
class PartitionWriter {
 public:
  virtual ~PartitionWriter() = default;

  // Writes the batch (records get the next offsets) and syncs it as the fsync
  // policy says. InvalidArgument for an empty batch or one over 1 GiB.
  // If writing fails (a full disk: ResourceExhausted) the partly written
  // batch is cut off again, nothing is visible, and the writer stays usable:
  // free space and retry. If a sync fails, the writer refuses every later
  // call: reopen it (recovery keeps what the disk holds). The builder is left
  // as it was; Clear() it for the next batch.
  virtual Result<AppendResult> Append(BatchBuilder* batch) = 0;
  // Makes everything appended so far durable.
  virtual Status Sync() = 0;
  // Syncs, then releases the lock. Destroying a writer without Close()
  // releases the lock without syncing.
  virtual Status Close() = 0;

  virtual PartitionId partition() const = 0;
  // The offset the next appended record will get.
  virtual Offset end_offset() const = 0;
  // The partition's last record (read back from the file), nullopt when the
  // partition is empty. The ingest resumes from it.
  virtual Result<std::optional<StoredRecord>> ReadLastRecord() = 0;
  virtual const RecoveryReport& recovery() const = 0;
};

// Reads one partition from any offset, and follows its tail.
class PartitionReader {
 public:
  virtual ~PartitionReader() = default;

  // The next Read returns records from `offset` on. OutOfRange when the
  // offset is before the start or after the end offset (the end offset
  // itself is fine: the reader then waits for new batches).
  virtual Status Seek(Offset offset) = 0;
  // Returns the next batch from the reader's position. When none is complete
  // yet, waits up to `wait` for the writer to append one (polling the file
  // size with a backoff of at most 10 ms) and returns an empty view if none
  // came. Corruption for damaged data, naming segment, position and offset.
  virtual Result<BatchView> Read(std::chrono::milliseconds wait = std::chrono::milliseconds(0)) = 0;
  // The bytes of the batch the last Read returned are valid until the next
  // Read, Seek or the reader's end. Those of a sealed segment are read in
  // place from a memory map; for them this returns an owner that keeps them
  // readable for as long as it is held (so a caller may keep pointers into
  // them instead of copying). Null for batches read through the reader's
  // buffer (the active segment).
  virtual std::shared_ptr<const void> LastBatchOwner() const = 0;
  // The offset of the next record Read will return.
  virtual Offset position() const = 0;
  // The offset after the last complete batch, as of now.
  virtual Result<Offset> EndOffset() = 0;
  virtual PartitionId partition() const = 0;
};

struct PartitionDescription {
  PartitionId partition;
  Offset start_offset;
  Offset end_offset;
  uint64_t record_count = 0;
  uint64_t bytes = 0;  // size of the segment files
  uint32_t segment_count = 0;
  // Empty, or what is wrong with bytes after the last valid batch (a torn
  // write not yet cut by a writer's open, or damage), which are not counted.
  std::string problem;
};

struct TopicDescription {
  std::string uri;
  uint32_t format_version = 0;
  TopicOptions options;
  int64_t created_unix_ms = 0;
  std::string created_by;
  std::vector<PartitionDescription> partitions;
};

// One topic of the embedded log on disk (DIR/TOPIC): its validated metadata
// and the way to its partitions. Callers above the storage seam use the
// transport-neutral topic API (tokenfeed/topic.h), whose log implementation
// this is.
class TopicDirectory {
 public:
  // Creates DIR/TOPIC with `options.partitions` empty partitions, atomically:
  // it is built in a hidden directory and renamed into place, so a crash
  // leaves either no topic or a complete one. AlreadyExists if it exists.
  static Result<std::unique_ptr<TopicDirectory>> Create(std::string_view uri, const TopicOptions& options,
                                                        FileSystem* fs = nullptr);
  // Opens and checks the metadata. NotFound when there is no topic;
  // Unsupported for a metadata version this build does not read.
  static Result<std::unique_ptr<TopicDirectory>> Open(std::string_view uri, FileSystem* fs = nullptr);
  // Deletes the topic and all of its data. Busy when a writer is open on any
  // of its partitions. Readers that are open see their files disappear.
  static Status Delete(std::string_view uri, FileSystem* fs = nullptr);

  ~TopicDirectory();
  const std::string& uri() const { return uri_; }
  uint32_t partition_count() const { return options_.partitions; }
  const TopicOptions& options() const { return options_; }

  // Busy (naming the holder's pid and host) when another writer has it.
  Result<std::unique_ptr<PartitionWriter>> OpenWriter(PartitionId partition, const WriterOptions& options = {});
  // Positioned at the partition's start offset.
  Result<std::unique_ptr<PartitionReader>> OpenReader(PartitionId partition, const ReaderOptions& options = {});
  // Start and end offsets, record counts and sizes, as of now.
  Result<TopicDescription> Describe();
  // Where the topic layer keeps the partition's token index (TOKENS,
  // docs/log_format.md), which the log itself never reads, and the file
  // system through which every file of this topic is reached.
  std::string TokenIndexPath(PartitionId partition) const;
  FileSystem* file_system() const { return fs_; }
  // The last record of a partition without opening a writer (it may lag a
  // writer that is appending, and it does not repair a torn tail).
  Result<std::optional<StoredRecord>> ReadLastRecord(PartitionId partition);

 private:
  TopicDirectory(FileSystem* fs, LogUri uri, TopicOptions options, int64_t created_unix_ms,
                 std::string created_by);
  Status CheckPartition(PartitionId partition) const;

  FileSystem* fs_;
  LogUri location_;
  std::string uri_;
  TopicOptions options_;
  int64_t created_unix_ms_;
  std::string created_by_;
};

}  // namespace tokenfeed::log
