// Producer: writes records to one Kafka topic, idempotently, acks=all, to
// partitions the caller names, and reports each record's fate by its token.
// A record is written (visible and durable on every in-sync replica) only
// when its Delivery comes back OK, at Delivery::offset; until then it may fail.
// One thread calls Produce and PollDeliveries/Flush. Destroying it drops the
// records not yet acknowledged, without a Delivery.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kafka/client_options.h"
#include "kafka/consumer_group_metadata.h"
#include "kafka/partition_offset.h"
#include "tokenfeed/status.h"

namespace tokenfeed::kafka {

enum class Compression { kNone, kGzip, kSnappy, kLz4, kZstd };
std::string_view CompressionName(Compression c);  // librdkafka's compression.type value
Result<Compression> ParseCompression(std::string_view name);

struct ProducerOptions : ClientOptions {
  std::string topic;
  // lz4: cheap to compress and to decompress at the consumer's target rate;
  // zstd packs token records tighter for a little more CPU (docs/kafka.md).
  Compression compression = Compression::kLz4;
  // Non-empty: a transactional producer (call InitTransactions before use).
  std::string transactional_id;
};

struct RecordHeader {
  std::string_view name;
  std::span<const std::byte> value;
};

struct Delivery {
  uint64_t token = 0;      // as given to Produce
  int32_t partition = -1;  // where it went
  int64_t offset = -1;     // its offset when status is OK
  Status status;           // OK: acknowledged by the broker
};

class Producer {
 public:
  // Connects and checks that the topic exists, within options.timeout.
  static Result<std::unique_ptr<Producer>> Open(const ProducerOptions& options);
  ~Producer();
  Producer(const Producer&) = delete;
  Producer& operator=(const Producer&) = delete;

  // Queues one record (key and value are copied). `partition` is the
  // caller's choice, or kAnyPartition. When the queue is full this serves
  // deliveries (kept for the next PollDeliveries) for up to the client
  // timeout. Errors here mean the record was not queued: no Delivery follows.
  Status Produce(int32_t partition, std::span<const std::byte> key, std::span<const std::byte> value,
                 uint64_t token, std::span<const RecordHeader> headers = {});
  Status Produce(int32_t partition, std::string_view key, std::string_view value, uint64_t token) {
    return Produce(partition, std::as_bytes(std::span(key)), std::as_bytes(std::span(value)), token);
  }

  // Appends the deliveries that arrive within `timeout` (0: only those ready).
  // A failed record is a Delivery with an error status, not a returned error;
  // the return value is an error only for a fatal producer state.
  Status PollDeliveries(std::chrono::milliseconds timeout, std::vector<Delivery>* out);
  // Waits until every queued record has its Delivery (appended to *out), or
  // returns TimedOut after `timeout` with the rest still in flight.
  Status Flush(std::chrono::milliseconds timeout, std::vector<Delivery>* out);
  // Records produced whose Delivery has not been handed out yet.
  size_t InFlight() const;

  // Transactions (transactional_id set). Each call is bounded by the client
  // timeout. After an error that says "abort the transaction", call
  // AbortTransaction and begin again; after a fatal one, open a new Producer.
  Status InitTransactions();
  Status BeginTransaction();
  Status SendOffsetsToTransaction(std::span<const TopicPartitionOffset> next_offsets,
                                  const ConsumerGroupMetadata& group);
  Status CommitTransaction();
  Status AbortTransaction();

  // Whether the producer has failed for good, and why. kFenced: a newer
  // producer with the same transactional id took over (another process, or
  // this one after InitTransactions on a new Producer); opening a new one
  // would fence that one in turn. kFatal: any other fatal error (for
  // instance a transaction the broker calls in an invalid state after a
  // rebalance); a new Producer with the same id recovers, its
  // InitTransactions aborting what this one left open.
  enum class Failure { kNone, kFenced, kFatal };
  Failure failure() const;

  // Puts the producer in a fatal (not fenced) error state, as a broker's
  // fatal answer would; for tests of the recovery above.
  void InjectFatalErrorForTesting(std::string_view reason);

  const std::string& topic() const;
  int32_t partition_count() const;
  const std::string& bootstrap() const;

 private:
  struct Impl;
  explicit Producer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tokenfeed::kafka
