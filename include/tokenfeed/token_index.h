// How many records and token ids the offsets of a partition hold before
// given offsets, learnt without reading the records: so that each rank of a
// loader can compute where every shard of the data ends. The embedded log
// keeps a token index beside each partition (TOKENS, docs/log_format.md
// "Token index"), maintained by its TopicWriter; a Kafka topic keeps it in a
// companion topic, TOPIC-token-index (docs/kafka.md "Token index"), that
// `tokenfeed index` builds and extends.
// This is not a record reader (PartitionCursor, topic.h) and never writes:
// readers may have read-only access to the topic.
// Visibility: what the partition holds when the call runs. Where the index
// lags the records (a writer appending now, one that crashed and was not
// reopened, a topic written before the index existed) the missing records
// are read and counted here, and the result says how many.
// Thread-safety: the functions may be called from any thread; a
// TokenIndexReader is used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "tokenfeed/ids.h"
#include "tokenfeed/status.h"
#include "tokenfeed/topic.h"

namespace tokenfeed::topic {

// Records and stored token ids of a partition before an offset, from the
// partition's start offset.
struct IndexPoint {
  uint64_t records = 0;
  uint64_t tokens = 0;
};

struct TokenIndexRead {
  std::vector<IndexPoint> points;  // one per asked offset, in the same order
  // Records the index lacked and that were read to count them, and their
  // stored bytes: 0 when the index covered every asked offset.
  uint64_t records_read = 0;
  uint64_t bytes_read = 0;
};

// For each offset in `offsets` (non-decreasing, each within [start, end] of
// the partition), the records and token ids stored at offsets [start,
// offset). A record that is not a token record counts no ids. Errors:
// InvalidArgument for offsets out of order, OutOfRange for one outside the
// partition or a partition the topic lacks, Corruption for a damaged index
// (naming the file and the entry), Unsupported for an index of a newer
// format version and for a transport this build has no support for. On
// Kafka, records are those a read_committed reader sees: offsets holding a
// transaction marker or an aborted or compacted record count none.
Result<TokenIndexRead> ReadTokenIndex(std::string_view uri, PartitionId partition, std::span<const Offset> offsets,
                                      const TopicConfig& config = {});

// ReadTokenIndex for many calls on one partition (a loader's blocks): the
// topic, the partition's range and its index file are opened once, by
// OpenTokenIndexReader, instead of at every call. The range and the index's
// entries are those at open: offsets past the end then are OutOfRange, and
// records appended to the index later are counted from the records.
class TokenIndexReader {
 public:
  virtual ~TokenIndexReader() = default;
  // As ReadTokenIndex.
  virtual Result<TokenIndexRead> Read(std::span<const Offset> offsets) = 0;
  // How many offsets, from offset 0, the index held entries for at open:
  // Read answers offsets up to that from the index alone, reading no
  // record. 0 where there is no index (a topic written before it, a torn
  // file) or it cannot be read.
  virtual uint64_t covered() const = 0;
};

// Errors: the topic or the partition missing (on Kafka also an unreachable
// cluster, after config.kafka_timeout). An index that cannot be read (a
// log: a link, a damaged or newer header; Kafka: a damaged chunk, an index
// topic of another partition count) is reported by each Read that asks an
// offset in range, as ReadTokenIndex.
Result<std::unique_ptr<TokenIndexReader>> OpenTokenIndexReader(std::string_view uri, PartitionId partition,
                                                               const TopicConfig& config = {});

// What a build of a Kafka topic's token index did for one partition.
struct TokenIndexBuild {
  PartitionId partition{0};
  uint64_t chunks_written = 0;
  uint64_t summaries_written = 0;  // to TOPIC-token-summary: one per chunk
  uint64_t records_read = 0;  // data records read to write them
  uint64_t covered = 0;       // the index covers offsets up to this one now
};

// How a build cuts the Kafka index (docs/kafka.md "Token index").
struct TokenIndexBuildOptions {
  // Records a chunk lists, 1 to 65536 (and one summary each).
  uint32_t chunk_records = 4096;
  // Offsets a summary group covers, 1 to 1048576: summaries answer block
  // boundaries of blocks of a multiple of it. Larger groups make the
  // summaries that every rank reads smaller (about 4 bytes a group, and 48
  // a chunk).
  uint32_t summary_group = 64;
};

// Builds or extends the token index of a Kafka topic: its companion topics
// TOPIC-token-index and TOPIC-token-summary (docs/kafka.md "Token index"),
// created when missing, get chunks and their summaries for every
// partition's records from where its index ends (or the partition's start)
// up to the high watermark taken at the start. One build per topic at a
// time. InvalidArgument for options out of range. Errors: the data topic missing, an index topic
// of another partition count, damaged chunks, an index that describes
// offsets past a partition's end (the topic made again), TimedOut when the
// records cannot be read within config.kafka_timeout (a transaction left
// open blocks a read_committed reader); Unsupported for a log: URI (the log's
// writer keeps TOKENS; opening a writer repairs it) or a build without Kafka.
Result<std::vector<TokenIndexBuild>> BuildKafkaTokenIndex(std::string_view uri, const TopicConfig& config = {},
                                                          const TokenIndexBuildOptions& options = {});

// Whether the transport of `uri` can keep a token index (the log and, in a
// build with Kafka, Kafka), so that ReadTokenIndex answers without reading
// the records where it is built. False for a string that is not a topic URI.
bool HasTokenIndex(std::string_view uri);

}  // namespace tokenfeed::topic
