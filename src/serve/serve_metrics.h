// ServeMetrics: what the preprocessing service has done, for its log line
// and its Prometheus endpoint: messages, records and tokens of committed
// transactions (aborted work is not counted, so the totals match the output
// topic), rejected messages by reason, transactions by outcome, producers
// replaced after fatal errors, consumer
// lag per assigned partition, and documents per second over the last ~10 s.
// Thread-safe: the service updates it, the metrics server renders it.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "tokenfeed/drop_reason.h"

namespace tokenfeed::serve {

// The work of one transaction, added to the totals when it commits.
struct TransactionCounts {
  uint64_t messages = 0;  // raw messages consumed (records out + rejected)
  uint64_t records = 0;   // token records produced
  uint64_t tokens = 0;
  std::array<uint64_t, text::kDropReasonCount> rejected{};
  bool empty() const { return messages == 0; }
};

struct PartitionLagSample {
  int32_t partition = 0;
  int64_t lag = -1;  // -1: unknown yet
};

class ServeMetrics {
 public:
  explicit ServeMetrics(std::string input_topic);

  void AddCommitted(const TransactionCounts& c);
  void AddAborted(uint64_t messages_dropped);
  // The transactional producer failed and a new one replaced it.
  void AddProducerReopened();
  void SetLag(std::vector<PartitionLagSample> lag);
  // Records a sample for the documents/s rate; call about once a second.
  void Tick(std::chrono::steady_clock::time_point now);

  std::string RenderPrometheus() const;
  // "12000 messages (950/s), 11990 records, 3.2 M tokens, 10 rejected, lag 42 on 3 partitions, ..."
  std::string Summary() const;

  uint64_t messages() const;

 private:
  double RateLocked() const;

  const std::string input_topic_;
  mutable std::mutex mu_;
  TransactionCounts total_;
  uint64_t committed_ = 0, aborted_ = 0, aborted_messages_ = 0, producer_reopens_ = 0;
  std::vector<PartitionLagSample> lag_;
  std::deque<std::pair<std::chrono::steady_clock::time_point, uint64_t>> samples_;
};

}  // namespace tokenfeed::serve
