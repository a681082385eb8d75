#include "kafka/rdkafka_handle.h"

#include <climits>
#include <string_view>
#include <thread>

#include "kafka/kafka_error.h"
#include "tokenfeed/client_log.h"
#include "tokenfeed/client_statistics.h"

namespace tokenfeed::kafka {
namespace {

ClientEvents* EventsOf(const rd_kafka_t* rk) {
  return static_cast<ClientEvents*>(rd_kafka_opaque(rk));
}

void OnLogUnguarded(const rd_kafka_t* rk, int level, const char* facility, const char* message) {
  const bool config_warning = std::string_view(facility) == "CONFWARN";
  // tokenfeed's topic writer sets enable.gapless.guarantee on purpose
  // (topic/kafka_topic.cc); librdkafka calls it experimental each time.
  if (config_warning && std::string_view(message).find("enable.gapless.guarantee is experimental") !=
                            std::string_view::npos) {
    return;
  }
  // One set of -X properties configures all of a command's clients
  // (producer, consumers, the admin client, which is a producer inside):
  // a consumer setting on a producer, or the reverse, is expected.
  // librdkafka: "... is a consumer property and will be ignored by this
  // producer instance", and the reverse.
  if (config_warning && std::string_view(message).find(" property and will be ignored by this ") !=
                            std::string_view::npos) {
    return;
  }
  // To the process's client log (stderr in librdkafka's own format unless a
  // program installed its sink: client_log.h).
  EmitClientLog({level, facility, rd_kafka_name(rk), message});
  // A configuration remark is not what a later timeout should blame.
  if (level <= 4 && !config_warning) {  // LOG_WARNING and worse
    if (ClientEvents* events = EventsOf(rk)) events->RecordProblem(message);
  }
}

// Runs on librdkafka's threads: nothing may leave it. A log line that cannot
// be passed on (out of memory, a sink that throws) is dropped.
void OnLog(const rd_kafka_t* rk, int level, const char* facility, const char* message) {
  try {
    OnLogUnguarded(rk, level, facility, message);
  } catch (...) {
  }
}

void OnError(rd_kafka_t* rk, int err, const char* reason, void* opaque) {
  (void)rk;
  auto* events = static_cast<ClientEvents*>(opaque);
  if (events == nullptr) return;
  const auto code = static_cast<rd_kafka_resp_err_t>(err);
  if (code == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN) events->NoteAllBrokersDown();
  try {
    events->RecordProblem(std::string(reason) + " [" + rd_kafka_err2name(code) + "]");
  } catch (...) {
    // The reason is for messages only; the error itself reaches the caller.
  }
}

void OnDeliveryReport(rd_kafka_t* rk, const rd_kafka_message_t* message, void* opaque) {
  (void)rk;
  auto* events = static_cast<ClientEvents*>(opaque);
  if (events == nullptr || !events->on_delivery) return;
  try {
    events->on_delivery(*message);
  } catch (...) {
    events->NoteCallbackFailure("delivery report");
  }
}

void OnRebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* partitions, void* opaque) {
  auto* events = static_cast<ClientEvents*>(opaque);
  if (events == nullptr || !events->on_rebalance) return;
  try {
    events->on_rebalance(rk, err, partitions);
  } catch (...) {
    events->NoteCallbackFailure("rebalance");
  }
}

// statistics.interval.ms > 0: librdkafka hands its report (JSON) to the
// process-wide store (client_statistics.h). Returns 0: librdkafka frees `json`.
int OnStatistics(rd_kafka_t* rk, char* json, size_t json_len, void* opaque) {
  (void)opaque;
  try {
    RecordClientStatistics(rd_kafka_name(rk), std::string(json, json_len));
  } catch (...) {
    // A report that cannot be kept (out of memory) is dropped: it only informs.
  }
  return 0;
}

Status RejectedProperty(const std::string& key, const std::string& origin, const char* errstr) {
  std::string m = "Kafka client property '" + key + "' (" + origin + ") rejected: ";
  if (IsSecretProperty(key)) {
    m.append("the value is not valid (not shown: it is a secret)");
  } else {
    m.append(errstr);
  }
  m.append("; see librdkafka's CONFIGURATION.md for the properties and their values");
  return Status::InvalidArgument(std::move(m));
}

}  // namespace

void ClientEvents::NoteCallbackFailure(const char* callback) noexcept {
  const char* none = nullptr;
  failed_callback_.compare_exchange_strong(none, callback);
}

Status ClientEvents::CallbackFailure() const {
  const char* callback = failed_callback_.load();
  if (callback == nullptr) return Status::OK();
  return Status::ResourceExhausted(std::string("the Kafka client's ") + callback +
                                   " handler failed (out of memory): the client cannot go on; open a new one");
}

void ClientEvents::RecordProblem(std::string text) {
  std::lock_guard<std::mutex> lock(mu_);
  last_problem_ = std::move(text);
}

std::string ClientEvents::LastProblem() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_problem_;
}

std::string ClientEvents::LastProblemSuffix() const {
  std::string p = LastProblem();
  return p.empty() ? std::string() : " (last client error: " + p + ")";
}

void ClientEvents::NoteAllBrokersDown() {
  std::lock_guard<std::mutex> lock(mu_);
  if (all_down_since_ == std::chrono::steady_clock::time_point{}) all_down_since_ = std::chrono::steady_clock::now();
}

void ClientEvents::NoteBrokerUp() {
  std::lock_guard<std::mutex> lock(mu_);
  all_down_since_ = {};
}

std::chrono::steady_clock::time_point ClientEvents::AllBrokersDownSince() const {
  std::lock_guard<std::mutex> lock(mu_);
  return all_down_since_;
}

void HandleDeleter::operator()(rd_kafka_t* rk) const {
  if (rk != nullptr) rd_kafka_destroy(rk);
}

int TimeoutMs(std::chrono::milliseconds t) {
  if (t.count() <= 0) return 0;
  if (t.count() >= INT_MAX) return INT_MAX;
  return static_cast<int>(t.count());
}

Result<Client> CreateClient(rd_kafka_type_t type, const ClientOptions& options,
                            const std::vector<DefaultSetting>& defaults, const std::vector<PinnedSetting>& pinned,
                            std::unique_ptr<ClientEvents> events) {
  Client client;
  client.events = events ? std::move(events) : std::make_unique<ClientEvents>();
  client.timeout = options.timeout;
  if (options.timeout.count() <= 0) {
    return Status::InvalidArgument("Kafka client timeout must be positive, got " +
                                   std::to_string(options.timeout.count()) + " ms");
  }

  ClientConfig merged;
  merged.Set("client.id", options.client_id, "tokenfeed default");
  // A metadata request must never create a topic as a side effect: whether a
  // missing topic is created or is an error is the caller's decision.
  merged.Set("allow.auto.create.topics", "false", "tokenfeed default");
  // librdkafka backs off reconnects up to 10 s; a reader then idles up to 10 s
  // after a broker restart. 2 s still spares a struggling broker.
  merged.Set("reconnect.backoff.max.ms", "2000", "tokenfeed default");
  for (const auto& d : defaults) merged.Set(d.key, d.value, "tokenfeed default");
  merged.Merge(options.config);
  if (!options.bootstrap.empty()) merged.Set("bootstrap.servers", options.bootstrap, "bootstrap servers");
  for (const auto& p : pinned) {
    const ConfigEntry* e = merged.Find(p.key);
    if (e != nullptr && e->origin != "tokenfeed default" && e->value != p.value) {
      return Status::InvalidArgument("Kafka client property '" + p.key + "=" + e->value + "' (" + e->origin +
                                     ") is not allowed here: " + std::string(p.why) + "; remove it");
    }
    merged.Set(p.key, p.value, "tokenfeed default");
  }
  const ConfigEntry* servers = merged.Find("bootstrap.servers");
  if (servers == nullptr || servers->value.empty()) {
    return Status::InvalidArgument(
        "no Kafka bootstrap servers: give kafka://HOST:PORT/TOPIC or set bootstrap.servers=HOST:PORT");
  }
  client.bootstrap = servers->value;
  const ConfigEntry* interval = merged.Find("statistics.interval.ms");
  client.statistics = interval != nullptr && !interval->value.empty() && interval->value != "0";

  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char errstr[512];
  for (const auto& e : merged.entries()) {
    if (rd_kafka_conf_set(conf, e.key.c_str(), e.value.c_str(), errstr, sizeof errstr) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return RejectedProperty(e.key, e.origin, errstr);
    }
  }
  rd_kafka_conf_set_opaque(conf, client.events.get());
  rd_kafka_conf_set_log_cb(conf, OnLog);
  rd_kafka_conf_set_error_cb(conf, OnError);
  rd_kafka_conf_set_stats_cb(conf, OnStatistics);
  if (type == RD_KAFKA_PRODUCER) rd_kafka_conf_set_dr_msg_cb(conf, OnDeliveryReport);
  if (type == RD_KAFKA_CONSUMER && client.events->on_rebalance) rd_kafka_conf_set_rebalance_cb(conf, OnRebalance);

  rd_kafka_t* rk = rd_kafka_new(type, conf, errstr, sizeof errstr);
  if (rk == nullptr) {
    rd_kafka_conf_destroy(conf);  // rd_kafka_new takes the conf only on success
    return Status::InvalidArgument(std::string("cannot create the Kafka client for brokers ") + client.bootstrap +
                                   ": " + errstr + "; check the client properties");
  }
  client.handle.reset(rk);
  return client;
}

void SleepBriefly() { std::this_thread::sleep_for(std::chrono::milliseconds(50)); }

Result<int32_t> FetchPartitionCount(const Client& client, const std::string& topic) {
  return RetryWhileNotFound(client, [&] { return FetchPartitionCountOnce(client, topic); });
}

Result<int32_t> FetchPartitionCountOnce(const Client& client, const std::string& topic) {
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(client.handle.get(), topic.c_str(), nullptr);
  if (rkt == nullptr) {
    return KafkaErrorStatus(rd_kafka_last_error(), "cannot use Kafka topic", {client.bootstrap, topic});
  }
  const struct rd_kafka_metadata* md = nullptr;
  const rd_kafka_resp_err_t err = rd_kafka_metadata(client.handle.get(), 0, rkt, &md, TimeoutMs(client.timeout));
  rd_kafka_topic_destroy(rkt);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    std::string detail = std::string("no metadata from the brokers within ") +
                         std::to_string(client.timeout.count()) + " ms: " + rd_kafka_err2str(err) +
                         client.events->LastProblemSuffix();
    // A first request that times out almost always means no broker answered.
    const bool unreachable = err == RD_KAFKA_RESP_ERR__TIMED_OUT || err == RD_KAFKA_RESP_ERR__TRANSPORT ||
                             err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN;
    return KafkaErrorStatus(err, unreachable ? "Kafka brokers unreachable" : "Kafka metadata request failed",
                            {client.bootstrap, topic}, detail);
  }
  Status status = Status::Internal("Kafka metadata answer without topic '" + topic + "'");
  int32_t count = 0;
  for (int i = 0; i < md->topic_cnt; ++i) {
    const auto& t = md->topics[i];
    if (topic != t.topic) continue;
    if (t.err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART || (t.err == RD_KAFKA_RESP_ERR_NO_ERROR && t.partition_cnt == 0)) {
      status = Status::NotFound("Kafka topic '" + topic + "' does not exist on brokers " + client.bootstrap +
                                ": create it (AdminClient::CreateTopic, or the writer's create-topic option) "
                                "or check the name");
    } else if (t.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      status = KafkaErrorStatus(t.err, "Kafka topic metadata", {client.bootstrap, topic});
    } else {
      status = Status::OK();
      count = static_cast<int32_t>(t.partition_cnt);
    }
  }
  rd_kafka_metadata_destroy(md);
  if (!status.ok()) return status;
  client.events->NoteBrokerUp();
  return count;
}

Result<std::pair<int64_t, int64_t>> QueryWatermarks(const Client& client, const std::string& topic,
                                                    int32_t partition) {
  const auto deadline = std::chrono::steady_clock::now() + client.timeout;
  for (int round = 0;; ++round) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    int64_t low = 0, high = 0;
    const rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(client.handle.get(), topic.c_str(), partition,
                                                                     &low, &high, std::max(TimeoutMs(left), 1));
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return std::make_pair(low, high);
    const bool transient = err == RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION ||
                           err == RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE ||
                           err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART ||
                           err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION;
    if (!transient || std::chrono::steady_clock::now() >= deadline) {
      return KafkaErrorStatus(err, "query Kafka watermarks", {client.bootstrap, topic, partition},
                              std::string(rd_kafka_err2str(err)) + client.events->LastProblemSuffix());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(10 * (round + 1), 200)));
  }
}

}  // namespace tokenfeed::kafka
