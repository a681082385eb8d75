// GroupConsumer: joins a consumer group (subscribe) for a streaming service
// that transforms records and writes them on. It never commits by itself
// (enable.auto.commit=false is enforced): the service hands Positions() and
// GroupMetadata() to a transactional Producer, so offsets and output commit
// together. The group assigns partitions. One thread; release every
// MessageBatch before destroying it; Close() leaves the group promptly.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "kafka/client_options.h"
#include "kafka/consumer_group_metadata.h"
#include "kafka/message_batch.h"
#include "kafka/partition_offset.h"
#include "tokenfeed/status.h"

namespace tokenfeed::kafka {

struct GroupConsumerOptions : ClientOptions {
  std::string group_id;
  std::vector<std::string> topics;
};

class GroupConsumer {
 public:
  static Result<std::unique_ptr<GroupConsumer>> Open(const GroupConsumerOptions& options);
  ~GroupConsumer();
  GroupConsumer(const GroupConsumer&) = delete;
  GroupConsumer& operator=(const GroupConsumer&) = delete;

  Result<MessageBatch> Poll(size_t max_records, std::chrono::milliseconds timeout);
  // For each currently assigned partition that returned records: the next
  // offset to consume (what a transaction commits).
  Result<std::vector<TopicPartitionOffset>> Positions() const;
  Result<std::vector<TopicPartitionOffset>> Assignment() const;
  Result<ConsumerGroupMetadata> GroupMetadata() const;
  // True once after each change of this member's assignment (the first
  // assignment included). A service that commits offsets in transactions
  // must then abort its open transaction: some of its input may now belong
  // to another member. Positions of revoked partitions are dropped, those of
  // newly assigned ones start unknown.
  bool TakeAssignmentChange();
  // Moves every assigned partition back to the group's committed offset (the
  // beginning where the group has none yet): after an aborted transaction
  // the records it consumed are read again. Records already fetched for
  // those partitions are dropped. Bounded by the client timeout.
  Status RewindToCommitted();
  // Per assigned partition: the next offset to consume (-1 until known) and
  // the high watermark from the latest fetch response (-1 until one came).
  // Asks no broker.
  struct PartitionLag {
    std::string topic;
    int32_t partition = 0;
    int64_t position = -1;
    int64_t high_watermark = -1;
  };
  std::vector<PartitionLag> Lag() const;
  Status Close();

 private:
  struct Impl;
  explicit GroupConsumer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tokenfeed::kafka
