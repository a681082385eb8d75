// A topic named by URI -- log:DIR/TOPIC (the embedded log) or
// kafka://HOST:PORT[,HOST:PORT]/TOPIC -- opened for writing token records
// (TopicWriter, for the ingest) or reading them (PartitionCursor, for inspect
// and the loader). The storage seam of the public API: the ingest, the loader,
// serve, the CLI and Python use it, and the two transports (src/log/,
// src/kafka/ behind src/topic/) are internal implementations.
// Visibility: a record written by TopicWriter (Reserve + Commit, or Append)
// is readable by cursors once Commit returns (log) or once Flush returns
// (Kafka: after the broker acknowledged it); a reserved record is never
// visible before its Commit. Thread-safety: a writer or a cursor is used by
// one thread at a time; separate objects may be used concurrently.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenfeed/ids.h"
#include "tokenfeed/log_options.h"
#include "tokenfeed/status.h"

namespace tokenfeed {
class FileSystem;  // internal (base/file_system.h): tests inject faults through it; null is the real one
}

namespace tokenfeed::topic {

enum class TopicKind { kLog, kKafka };

// kLog for "log:...", kKafka for "kafka://...", InvalidArgument otherwise
// (saying what both forms look like).
Result<TopicKind> KindOf(std::string_view uri);

// How a reader moves through a partition. Each transport tunes its reads for
// it, so that code above this seam never names a transport's settings.
enum class ReadPattern {
  // From an offset onwards (inspect, a tail): reading far ahead pays.
  kSequential,
  // In blocks of known extent, jumping from block to block (the loader):
  // about one producer batch per read, short waits at the broker, since a
  // jump throws away what was fetched ahead. Embedded log: 1 MiB reads of
  // the active segment instead of 8 MiB. Kafka: fetch.wait.max.ms=10 and
  // max.partition.fetch.bytes=262144 (the client properties still win).
  kBlocks,
};

// What code above this seam needs to know of a transport: asked of a URI
// instead of testing its scheme. A plain value.
struct TransportHints {
  // Records per block for a kBlocks reader when the caller sets none: the
  // size at which a jump costs little beside the block (the log: a lookup in
  // a memory map; Kafka: a restarted fetch, hence larger blocks).
  uint32_t block_records = 1024;
  // Whether checking that a topic still holds a snapshot's offset ranges is
  // cheap enough to do often (the log: a few file checks). When false (Kafka:
  // a round trip to the cluster), cursors report a vanished topic or offset
  // themselves when they reach it.
  bool cheap_snapshot_check = true;
};

// The hints of the transport a URI names; InvalidArgument as KindOf.
Result<TransportHints> HintsFor(std::string_view uri);

struct TopicConfig {
  // Kafka client properties, ignored by the embedded log: a properties file
  // (key=value lines) and then "key=value" assignments (-X), later ones
  // winning; bootstrap.servers comes from the URI.
  std::string kafka_config_file;
  std::vector<std::string> kafka_properties;
  // How long a Kafka operation may wait for the cluster before failing.
  std::chrono::milliseconds kafka_timeout{30000};
  // Cursors: how they will be read (the transport tunes for it).
  ReadPattern read_pattern = ReadPattern::kSequential;
};

struct WriterConfig : TopicConfig {
  // When the topic does not exist: create it with this many partitions, or
  // fail with NotFound when create_if_missing is false.
  uint32_t partitions = 1;
  bool create_if_missing = true;
  // Kafka topics only.
  int replication_factor = 1;
  // lz4, zstd, snappy, gzip, none. lz4 keeps a reader far above its target
  // rate per core; zstd stores ~1.5x less for ~2x the CPU (docs/kafka.md).
  std::string compression = "lz4";
  // Embedded log only.
  log::WriterOptions log;
  log::TopicOptions log_topic;
  FileSystem* log_file_system = nullptr;  // null: the real one (tests inject faults here)
};

// Appends records to some partitions of a topic. Each partition it writes
// must have no other writer (the log enforces it; for Kafka it is the caller's
// rule), so a partition's records are exactly the order in which they were
// reserved and a crash leaves a prefix of them.
//
// Records are written in place: Reserve adds a record of a known size to the
// partition's open batch and returns its bytes, the caller fills them, and
// Commit appends the open batch. The embedded log reserves the record inside
// the batch buffer that it writes to the segment file, so a record is written
// once (RecordEncoder::WriteTo) and never copied before the write; Kafka
// collects the open batch in a buffer and copies it into the producer.
class TopicWriter {
 public:
  virtual ~TopicWriter() = default;
  virtual const std::string& uri() const = 0;
  virtual uint32_t partition_count() const = 0;
  // Adds one record of exactly `size` bytes to the end of `partition`'s open
  // batch and returns where to write it: every byte must be written before
  // the next call on this writer, which may move the open batch (the span is
  // invalid then). Nothing is added when the partition is not open here
  // (InvalidArgument) or the transport cannot store the record: the log
  // refuses one that would make the open batch larger than 1 GiB
  // (InvalidArgument; the open batch and the writer stay usable), Kafka one
  // above the topic's max.message.bytes (ResourceExhausted, and like any
  // Kafka failure it ends the writer).
  virtual Result<std::span<uint8_t>> Reserve(PartitionId partition, size_t size) = 0;
  // Appends `partition`'s open batch (nothing when it is empty): its records
  // get the partition's next offsets, in the order they were reserved, and a
  // new open batch starts. Durable/acknowledged: for the log, as its fsync
  // policy says when this returns; for Kafka, after Flush. If it fails, the
  // log keeps the open batch (after a full disk: free space and Commit again,
  // or Abandon it); a Kafka writer refuses every later call.
  virtual Status Commit(PartitionId partition) = 0;
  // Drops `partition`'s open batch: none of its records is ever written.
  virtual Status Abandon(PartitionId partition) = 0;
  // Copies `records` into `partition`'s open batch and commits it: Reserve,
  // fill and Commit for callers that hold their records already. When a
  // record cannot be reserved the open batch is abandoned, so no part of
  // `records` is written.
  Status Append(PartitionId partition, std::span<const std::span<const uint8_t>> records);
  // Waits until everything committed is acknowledged (and synced, for the log).
  virtual Status Flush() = 0;
  // The offset after the partition's last committed record, and that
  // record's bytes (nullopt when empty): where a resumed ingest takes up.
  virtual Result<Offset> EndOffset(PartitionId partition) = 0;
  virtual Result<std::optional<std::string>> LastRecord(PartitionId partition) = 0;
  // Flushes, then releases the partitions. Open batches are dropped, as
  // Abandon does: Commit them first.
  virtual Status Close() = 0;
  // What opening the writer repaired, a line per partition that needed it
  // ("partition 3: cut 120 bytes off '...' at position 4096 (torn tail)"):
  // the embedded log's recovery (docs/log_format.md), and for its token
  // index what was rebuilt or why the index is off, at opening or since (a
  // failed index write). Empty when nothing was repaired, and for Kafka,
  // whose brokers repair their own logs.
  virtual std::vector<std::string> RecoveryNotes() const = 0;
};

// Opens (creating if allowed) the topic and the writers of `partitions`
// (all partitions when empty). InvalidArgument when an existing topic has a
// different partition count than config.partitions asks for.
Result<std::unique_ptr<TopicWriter>> OpenTopicWriter(std::string_view uri, const WriterConfig& config,
                                                     std::vector<PartitionId> partitions = {});

struct PartitionSummary {
  PartitionId partition;
  Offset start_offset;
  Offset end_offset;
  uint64_t bytes = 0;  // stored size, where the transport knows it (0 otherwise)
  uint64_t records() const { return end_offset.value() - start_offset.value(); }
};

struct TopicSummary {
  std::string uri;
  std::vector<PartitionSummary> partitions;
  std::string details;  // transport-specific, one line (creation, replication, ...)
};

// NotFound when the topic does not exist.
Result<TopicSummary> DescribeTopic(std::string_view uri, const TopicConfig& config = {});

// One stored record, as a cursor returns it.
struct StoredRecordView {
  Offset offset;
  std::span<const uint8_t> bytes;
  // When the record was appended, in milliseconds since the Unix epoch, as
  // the transport knows it (the log: its batch's append time; Kafka: the
  // record's timestamp); -1 when unknown.
  int64_t append_time_ms = -1;
};

// Reads one partition from any offset.
class PartitionCursor {
 public:
  virtual ~PartitionCursor() = default;
  // OutOfRange when `offset` is outside [start, end].
  virtual Status Seek(Offset offset) = 0;
  // The next records from the cursor's position, at least one unless none
  // arrived within `wait` (then empty), at most `max_records` (> 0), and
  // only records at offsets below `before`; the position moves past them
  // and no further, so a reader that wants a given count or range leaves the
  // rest for its next Read instead of seeking back. Offsets increase but
  // need not be dense (Offset, ids.h): a Kafka topic written in
  // transactions, or compacted, has offsets with no record to read. The
  // position passes such offsets as the cursor learns of them: once a
  // record at or past `before` has been fetched, or the partition's end is
  // reached, the position is `before` (or the end) even when this Read
  // returned nothing; a record fetched beyond `before` is kept for the next
  // Read. Valid until the next call.
  virtual Result<std::span<const StoredRecordView>> Read(std::chrono::milliseconds wait, size_t max_records,
                                                         Offset before) = 0;
  Result<std::span<const StoredRecordView>> Read(std::chrono::milliseconds wait, size_t max_records) {
    return Read(wait, max_records, Offset(UINT64_MAX));
  }
  Result<std::span<const StoredRecordView>> Read(std::chrono::milliseconds wait) { return Read(wait, SIZE_MAX); }
  // While held, keeps the bytes of the records the last Read returned
  // readable, past the next call and the cursor's end: the embedded log's
  // sealed segments, read in place from a memory map. Null when the bytes
  // are valid only until the next call (Kafka; the log's active segment).
  virtual std::shared_ptr<const void> RecordsOwner() const { return nullptr; }
  // A promise about the reads up to the next Seek: none at or past `end`
  // (the loader reads blocks of known extent). A Kafka cursor then stops
  // its partition's fetch once it has handed out the record before `end`,
  // instead of fetching and decompressing records that the next Seek would
  // throw away. A Read past `end` still works (it fetches again), only
  // slower. Ignored by the embedded log, which reads nothing ahead.
  virtual Status SetReadEnd(Offset end) = 0;
  virtual Offset position() const = 0;
  virtual Result<Offset> EndOffset() = 0;
  virtual Result<Offset> StartOffset() = 0;
  virtual PartitionId partition() const = 0;
};

Result<std::unique_ptr<PartitionCursor>> OpenPartitionCursor(std::string_view uri, PartitionId partition,
                                                             const TopicConfig& config = {});

}  // namespace tokenfeed::topic
