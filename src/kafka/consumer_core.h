// ConsumerCore: the part PartitionConsumer and GroupConsumer share: one
// librdkafka consumer handle with its consumer queue, the batch Poll that
// drains the queue without waiting once data is there, per-partition
// positions (next offset to hand out) and end-of-partition state, and the
// bounded "no broker reachable" check. Internal to src/kafka; one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <librdkafka/rdkafka.h>

#include "kafka/message_batch.h"
#include "kafka/partition_offset.h"
#include "kafka/rdkafka_handle.h"
#include "tokenfeed/status.h"

namespace tokenfeed::kafka {

// Fetch settings for throughput (docs/kafka.md, "Consumer settings").
std::vector<DefaultSetting> ConsumerFetchDefaults();

class ConsumerCore {
 public:
  struct PartitionState {
    int64_t position = -1;  // next offset to hand out; -1 until known
    bool at_end = false;    // end of partition reported at `position`
  };
  using Key = std::pair<std::string, int32_t>;

  explicit ConsumerCore(Client client);
  ~ConsumerCore();
  ConsumerCore(const ConsumerCore&) = delete;
  ConsumerCore& operator=(const ConsumerCore&) = delete;

  Status RedirectToConsumerQueue();
  // Leaves the group (if any); idempotent. The destructor calls it too.
  rd_kafka_resp_err_t Close();
  Result<MessageBatch> Poll(size_t max_records, std::chrono::milliseconds timeout);

  void ResetPartition(const std::string& topic, int32_t partition, int64_t offset);
  void ForgetPartitions();
  void ForgetPartition(const std::string& topic, int32_t partition);
  const PartitionState* Find(const std::string& topic, int32_t partition) const;
  const std::map<Key, PartitionState>& partitions() const { return partitions_; }

  rd_kafka_t* rk() const { return client_.handle.get(); }
  const Client& client() const { return client_; }

 private:
  void ServeWaitingReports();
  Status ErrorFromMessage(const rd_kafka_message_t& m);
  Status CheckBrokersReachable();

  Client client_;
  rd_kafka_queue_t* queue_ = nullptr;
  std::vector<rd_kafka_message_t*> buffer_;
  std::map<Key, PartitionState> partitions_;
  Status pending_error_;  // found after some records of a batch: returned by the next Poll
  bool closed_ = false;
};

}  // namespace tokenfeed::kafka
