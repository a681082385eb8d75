// PartitionConsumer: reads chosen partitions of one topic from offsets the
// caller gives (the training checkpoint's cursor), in zero-copy batches, and
// says when a partition has been read to its end. It never commits offsets to
// Kafka (auto-commit is refused, there is no commit call); an offset no longer
// stored is an OutOfRange error, never a silent jump. One thread; release
// every MessageBatch before destroying the consumer.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kafka/client_options.h"
#include "kafka/message_batch.h"
#include "kafka/partition_offset.h"
#include "tokenfeed/status.h"

namespace tokenfeed::kafka {

struct PartitionConsumerOptions : ClientOptions {
  std::string topic;
  // A topic the cluster says is missing: true, asked again for a grace of
  // 1.5 s (a topic created a moment ago may not have reached every broker);
  // false, NotFound at once (a topic that, if it exists, was made long ago).
  bool wait_for_new_topic = true;
};

class PartitionConsumer {
 public:
  // Connects (bounded by options.timeout), checks that the topic and every
  // assigned partition exist, and starts fetching.
  static Result<std::unique_ptr<PartitionConsumer>> Open(const PartitionConsumerOptions& options,
                                                         const std::vector<PartitionOffset>& assignment);
  ~PartitionConsumer();
  PartitionConsumer(const PartitionConsumer&) = delete;
  PartitionConsumer& operator=(const PartitionConsumer&) = delete;

  // Replaces the whole assignment.
  Status Assign(const std::vector<PartitionOffset>& assignment);
  // Up to max_records records; waits up to `timeout` only while none is
  // ready. An empty batch means nothing arrived in time (see AllAtEnd).
  Result<MessageBatch> Poll(size_t max_records, std::chrono::milliseconds timeout);
  // Moves an assigned partition; records not yet returned are discarded.
  // Works on a paused partition too (it stays paused), so that a reader can
  // move and then resume without fetching anything at the old position.
  Status Seek(int32_t partition, int64_t offset);
  // Stops (Pause) and restarts (Resume) the fetching of an assigned
  // partition. Pausing discards what is fetched but not yet returned;
  // Resume fetches from the offset after the last record returned, or from
  // the offset of a Seek made while paused. A reader that knows where it
  // will stop pauses there, so that the consumer does not go on fetching
  // and decompressing records nobody asks for.
  Status Pause(int32_t partition);
  Status Resume(int32_t partition);

  // True once the partition has been read up to its high watermark (as of
  // the fetch that found the end) and nothing newer has been returned since.
  bool AtEnd(int32_t partition) const;
  bool AllAtEnd() const;
  // The next offset Poll will return for the partition, once known (after
  // an absolute start offset, a record or the end).
  std::optional<int64_t> Position(int32_t partition) const;
  // From the partition's leader, bounded by the client timeout.
  Result<Watermarks> QueryWatermarks(int32_t partition);

  const std::string& topic() const;
  int32_t partition_count() const;

 private:
  struct Impl;
  explicit PartitionConsumer(std::unique_ptr<Impl> impl);
  Status SetPaused(int32_t partition, bool paused);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tokenfeed::kafka
