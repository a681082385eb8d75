// Creating and owning one librdkafka client handle: tokenfeed's defaults,
// then the user's properties (a rejected one is reported with its origin);
// log and error callbacks feed ClientEvents, so a later timeout can say what
// librdkafka last complained about ("Connect to ... failed"); statistics
// reports, when statistics.interval.ms asks for them, go to the store of
// client_statistics.h. Internal to src/kafka. ClientEvents is thread-safe
// (librdkafka's threads call it) and outlives the handle (Client destroys
// them in that order).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <librdkafka/rdkafka.h>

#include "kafka/client_options.h"
#include "tokenfeed/status.h"

namespace tokenfeed::kafka {

class ClientEvents {
 public:
  void RecordProblem(std::string text);
  // The latest warning or error librdkafka reported, or "".
  std::string LastProblem() const;
  // " (last client error: ...)" or "".
  std::string LastProblemSuffix() const;
  void NoteAllBrokersDown();
  void NoteBrokerUp();
  // Since when no broker has been reachable; zero time_point when one is.
  std::chrono::steady_clock::time_point AllBrokersDownSince() const;

  // Set by the producer before the handle exists; called on librdkafka's
  // polling thread (the caller of rd_kafka_poll / rd_kafka_flush).
  std::function<void(const rd_kafka_message_t&)> on_delivery;
  // Set by the group consumer; called on the polling thread. It must apply
  // the (incremental) assignment or revocation itself.
  std::function<void(rd_kafka_t*, rd_kafka_resp_err_t, rd_kafka_topic_partition_list_t*)> on_rebalance;

  // A callback above that threw (out of memory in a delivery or rebalance
  // handler). No exception may cross librdkafka's C frames or leave its
  // threads, so the callbacks keep it here and the client's next call (a
  // poll, a flush) reports it as its error: CallbackFailure() is OK until then.
  void NoteCallbackFailure(const char* callback) noexcept;
  Status CallbackFailure() const;

 private:
  mutable std::mutex mu_;
  std::string last_problem_;
  std::chrono::steady_clock::time_point all_down_since_{};
  std::atomic<const char*> failed_callback_{nullptr};
};

struct HandleDeleter {
  void operator()(rd_kafka_t* rk) const;
};
using HandlePtr = std::unique_ptr<rd_kafka_t, HandleDeleter>;

struct DefaultSetting {
  std::string key;
  std::string value;
};

// Properties a client sets for its own correctness and the user may not change.
struct PinnedSetting {
  std::string key;
  std::string value;
  std::string_view why;  // shown when the user's config disagrees
};

// A handle and the ClientEvents its callbacks write to, destroyed in order.
struct Client {
  std::unique_ptr<ClientEvents> events;
  HandlePtr handle;
  std::string bootstrap;  // for messages
  std::chrono::milliseconds timeout{};
  bool statistics = false;  // statistics.interval.ms > 0: librdkafka reports (client_statistics.h)
};

Result<Client> CreateClient(rd_kafka_type_t type, const ClientOptions& options,
                            const std::vector<DefaultSetting>& defaults, const std::vector<PinnedSetting>& pinned,
                            std::unique_ptr<ClientEvents> events = nullptr);

// Asks the cluster for the topic's metadata within the client's timeout: the
// broker-unreachable and topic-missing checks every client runs on opening.
// Returns the number of partitions. A new topic reaches the brokers one by
// one, so "missing" is believed only after kTopicPropagationGrace of asking.
Result<int32_t> FetchPartitionCount(const Client& client, const std::string& topic);
// The same, asking once: NotFound as soon as the cluster says "missing".
Result<int32_t> FetchPartitionCountOnce(const Client& client, const std::string& topic);

// Low and high watermarks from the partition's leader. Right after a topic
// is created or a leader moves, the broker may answer "not leader" for a
// moment: such answers are retried until the client timeout.
Result<std::pair<int64_t, int64_t>> QueryWatermarks(const Client& client, const std::string& topic,
                                                    int32_t partition);

int TimeoutMs(std::chrono::milliseconds t);

inline constexpr std::chrono::milliseconds kTopicPropagationGrace{1500};
void SleepBriefly();

// Repeats `attempt` while it returns NotFound, for up to the grace (bounded by
// the client timeout): hides a topic's propagation delay between brokers.
template <typename F>
auto RetryWhileNotFound(const Client& client, F attempt) -> decltype(attempt()) {
  const auto grace = std::min(client.timeout, kTopicPropagationGrace);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  for (;;) {
    auto r = attempt();
    if (r.ok() || !r.status().IsNotFound() || std::chrono::steady_clock::now() >= deadline) return r;
    SleepBriefly();
  }
}


}  // namespace tokenfeed::kafka
