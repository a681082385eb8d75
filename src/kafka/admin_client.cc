#include "kafka/admin_client.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "kafka/admin_request.h"
#include "kafka/kafka_error.h"
#include "kafka/kafka_uri.h"
#include "kafka/rdkafka_handle.h"

namespace tokenfeed::kafka {
namespace {

using Clock = std::chrono::steady_clock;

// Metadata for one topic; NotFound when the cluster does not know it.
Result<TopicInfo> FetchTopicInfo(const Client& client, const std::string& topic, int timeout_ms) {
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(client.handle.get(), topic.c_str(), nullptr);
  if (rkt == nullptr) return KafkaErrorStatus(rd_kafka_last_error(), "cannot use Kafka topic", {client.bootstrap, topic});
  const struct rd_kafka_metadata* md = nullptr;
  const rd_kafka_resp_err_t err = rd_kafka_metadata(client.handle.get(), 0, rkt, &md, timeout_ms);
  rd_kafka_topic_destroy(rkt);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaErrorStatus(err, "Kafka metadata request failed", {client.bootstrap, topic},
                            std::string(rd_kafka_err2str(err)) + client.events->LastProblemSuffix());
  }
  Result<TopicInfo> out = Status::NotFound("Kafka topic '" + topic + "' does not exist on brokers " + client.bootstrap);
  for (int i = 0; i < md->topic_cnt; ++i) {
    const auto& t = md->topics[i];
    if (topic != t.topic) continue;
    if (t.err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART || (t.err == RD_KAFKA_RESP_ERR_NO_ERROR && t.partition_cnt == 0)) {
      break;
    }
    if (t.err != RD_KAFKA_RESP_ERR_NO_ERROR && t.err != RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE) {
      out = KafkaErrorStatus(t.err, "Kafka topic metadata", {client.bootstrap, topic});
      break;
    }
    TopicInfo info;
    info.name = topic;
    for (int p = 0; p < t.partition_cnt; ++p) {
      const auto& pm = t.partitions[p];
      PartitionInfo pi;
      pi.id = pm.id;
      pi.leader = pm.err == RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE ? -1 : pm.leader;
      pi.replicas.assign(pm.replicas, pm.replicas + pm.replica_cnt);
      pi.isr.assign(pm.isrs, pm.isrs + pm.isr_cnt);
      info.partitions.push_back(std::move(pi));
    }
    std::sort(info.partitions.begin(), info.partitions.end(),
              [](const PartitionInfo& a, const PartitionInfo& b) { return a.id < b.id; });
    out = std::move(info);
  }
  rd_kafka_metadata_destroy(md);
  return out;
}

bool AllLeadersElected(const TopicInfo& info, int32_t want_partitions) {
  if (static_cast<int32_t>(info.partitions.size()) < want_partitions) return false;
  return std::all_of(info.partitions.begin(), info.partitions.end(),
                     [](const PartitionInfo& p) { return p.leader >= 0; });
}

}  // namespace

struct AdminClient::Impl {
  Client client;
  int timeout_ms() const { return TimeoutMs(client.timeout); }
  ErrorWhere Where(const std::string& topic) const { return {client.bootstrap, topic}; }
};

AdminClient::AdminClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
AdminClient::~AdminClient() = default;

Result<std::unique_ptr<AdminClient>> AdminClient::Open(const ClientOptions& options) {
  auto impl = std::make_unique<Impl>();
  TF_ASSIGN_OR_RETURN(impl->client, CreateClient(RD_KAFKA_PRODUCER, options, {}, {}));
  // One metadata round trip proves the brokers are reachable.
  const struct rd_kafka_metadata* md = nullptr;
  const rd_kafka_resp_err_t err = rd_kafka_metadata(impl->client.handle.get(), 0, nullptr, &md, impl->timeout_ms());
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaErrorStatus(err, "Kafka brokers unreachable", {impl->client.bootstrap},
                            std::string("no metadata within ") + std::to_string(impl->timeout_ms()) + " ms: " +
                                rd_kafka_err2str(err) + impl->client.events->LastProblemSuffix());
  }
  rd_kafka_metadata_destroy(md);
  return std::unique_ptr<AdminClient>(new AdminClient(std::move(impl)));
}

Status AdminClient::CreateTopic(const TopicSpec& spec) {
  TF_RETURN_IF_ERROR(ValidateTopicName(spec.name));
  if (spec.partitions < 1) {
    return Status::InvalidArgument("Kafka topic '" + spec.name + "': partitions must be at least 1, got " +
                                   std::to_string(spec.partitions));
  }
  const Client& c = impl_->client;
  char errstr[512];
  rd_kafka_NewTopic_t* nt = rd_kafka_NewTopic_new(spec.name.c_str(), spec.partitions, spec.replication_factor,
                                                  errstr, sizeof errstr);
  if (nt == nullptr) return Status::InvalidArgument("Kafka topic '" + spec.name + "': " + errstr);
  for (const auto& [k, v] : spec.configs) {
    if (rd_kafka_NewTopic_set_config(nt, k.c_str(), v.c_str()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      rd_kafka_NewTopic_destroy(nt);
      return Status::InvalidArgument("Kafka topic '" + spec.name + "': cannot set config '" + k + "'");
    }
  }
  auto ev = RunAdminRequest(c, "create Kafka topic", spec.name, [&](rd_kafka_AdminOptions_t* o, rd_kafka_queue_t* q) {
    rd_kafka_CreateTopics(c.handle.get(), &nt, 1, o, q);
  });
  rd_kafka_NewTopic_destroy(nt);
  if (!ev.ok()) return ev.status();
  size_t n = 0;
  const rd_kafka_topic_result_t** results =
      rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev->get()), &n);
  for (size_t i = 0; i < n; ++i) {
    const rd_kafka_resp_err_t err = rd_kafka_topic_result_error(results[i]);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) continue;
    const char* text = rd_kafka_topic_result_error_string(results[i]);
    if (err == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
      return Status::AlreadyExists("Kafka topic '" + spec.name + "' already exists on brokers " + c.bootstrap);
    }
    return KafkaErrorStatus(err, "create Kafka topic", impl_->Where(spec.name), text != nullptr ? text : "");
  }
  // Wait (bounded) until every partition has a leader: a producer opened right
  // after must find the topic whole.
  const auto deadline = Clock::now() + c.timeout;
  for (int round = 0;; ++round) {
    auto info = FetchTopicInfo(c, spec.name, impl_->timeout_ms());
    if (info.ok() && AllLeadersElected(*info, spec.partitions)) return Status::OK();
    if (Clock::now() >= deadline) {
      return Status::TimedOut("Kafka topic '" + spec.name + "' was created but its partitions have no leaders after " +
                              std::to_string(c.timeout.count()) + " ms (brokers " + c.bootstrap +
                              "); check the brokers' health");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(20 * (round + 1), 200)));
  }
}

Result<TopicInfo> AdminClient::DescribeTopic(const std::string& topic) {
  TF_RETURN_IF_ERROR(ValidateTopicName(topic));
  return RetryWhileNotFound(impl_->client, [&] { return FetchTopicInfo(impl_->client, topic, impl_->timeout_ms()); });
}

Result<TopicInfo> AdminClient::EnsureTopic(const TopicSpec& spec, MissingTopic missing) {
  auto info = DescribeTopic(spec.name);
  if (info.ok()) {
    if (static_cast<int32_t>(info->partitions.size()) < spec.partitions) {
      return Status::InvalidArgument("Kafka topic '" + spec.name + "' exists with " +
                                     std::to_string(info->partitions.size()) + " partitions, fewer than the " +
                                     std::to_string(spec.partitions) + " asked for; use another topic or add "
                                     "partitions with the Kafka tools");
    }
    return info;
  }
  if (!info.status().IsNotFound()) return info.status();
  if (missing == MissingTopic::kError) {
    return Status::NotFound("Kafka topic '" + spec.name + "' does not exist on brokers " + impl_->client.bootstrap +
                            ": create it first, or ask for it to be created");
  }
  Status created = CreateTopic(spec);
  // Another writer may have created it meanwhile: that is fine.
  if (!created.ok() && created.code() != StatusCode::kAlreadyExists) return created;
  return DescribeTopic(spec.name);
}

Status AdminClient::DeleteTopic(const std::string& topic) {
  TF_RETURN_IF_ERROR(ValidateTopicName(topic));
  const Client& c = impl_->client;
  rd_kafka_DeleteTopic_t* dt = rd_kafka_DeleteTopic_new(topic.c_str());
  auto ev = RunAdminRequest(c, "delete Kafka topic", topic, [&](rd_kafka_AdminOptions_t* o, rd_kafka_queue_t* q) {
    rd_kafka_DeleteTopics(c.handle.get(), &dt, 1, o, q);
  });
  rd_kafka_DeleteTopic_destroy(dt);
  if (!ev.ok()) return ev.status();
  size_t n = 0;
  const rd_kafka_topic_result_t** results =
      rd_kafka_DeleteTopics_result_topics(rd_kafka_event_DeleteTopics_result(ev->get()), &n);
  for (size_t i = 0; i < n; ++i) {
    const rd_kafka_resp_err_t err = rd_kafka_topic_result_error(results[i]);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) continue;
    if (err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
      return Status::NotFound("Kafka topic '" + topic + "' does not exist on brokers " + c.bootstrap);
    }
    const char* text = rd_kafka_topic_result_error_string(results[i]);
    return KafkaErrorStatus(err, "delete Kafka topic", impl_->Where(topic), text != nullptr ? text : "");
  }
  const auto deadline = Clock::now() + c.timeout;
  for (int round = 0;; ++round) {
    auto info = FetchTopicInfo(c, topic, impl_->timeout_ms());
    if (!info.ok() && info.status().IsNotFound()) return Status::OK();
    if (Clock::now() >= deadline) {
      return Status::TimedOut("Kafka topic '" + topic + "' still listed " + std::to_string(c.timeout.count()) +
                              " ms after its deletion (brokers " + c.bootstrap + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(20 * (round + 1), 200)));
  }
}

Result<Watermarks> AdminClient::QueryWatermarks(const std::string& topic, int32_t partition) {
  TF_RETURN_IF_ERROR(ValidateTopicName(topic));
  TF_ASSIGN_OR_RETURN(auto w, kafka::QueryWatermarks(impl_->client, topic, partition));
  return Watermarks{w.first, w.second};
}

Result<std::vector<Watermarks>> AdminClient::QueryWatermarks(const std::string& topic) {
  TF_ASSIGN_OR_RETURN(TopicInfo info, DescribeTopic(topic));
  std::vector<Watermarks> out;
  out.reserve(info.partitions.size());
  for (const auto& p : info.partitions) {
    TF_ASSIGN_OR_RETURN(Watermarks w, QueryWatermarks(topic, p.id));
    out.push_back(w);
  }
  return out;
}

Result<std::vector<std::pair<std::string, std::string>>> AdminClient::DescribeTopicConfigs(const std::string& topic) {
  TF_RETURN_IF_ERROR(ValidateTopicName(topic));
  return kafka::DescribeTopicConfigs(impl_->client, topic);
}

Result<std::vector<TopicPartitionOffset>> AdminClient::ListGroupOffsets(const std::string& group) {
  const Client& c = impl_->client;
  rd_kafka_ListConsumerGroupOffsets_t* req = rd_kafka_ListConsumerGroupOffsets_new(group.c_str(), nullptr);
  auto ev = RunAdminRequest(c, "list Kafka consumer group offsets", {},
                            [&](rd_kafka_AdminOptions_t* o, rd_kafka_queue_t* q) {
                              rd_kafka_ListConsumerGroupOffsets(c.handle.get(), &req, 1, o, q);
                            });
  rd_kafka_ListConsumerGroupOffsets_destroy(req);
  if (!ev.ok()) return ev.status();
  size_t n = 0;
  const rd_kafka_group_result_t** groups =
      rd_kafka_ListConsumerGroupOffsets_result_groups(rd_kafka_event_ListConsumerGroupOffsets_result(ev->get()), &n);
  std::vector<TopicPartitionOffset> out;
  for (size_t i = 0; i < n; ++i) {
    if (const rd_kafka_error_t* e = rd_kafka_group_result_error(groups[i])) {
      return KafkaErrorStatus(rd_kafka_error_code(e), "list offsets of Kafka consumer group '" + group + "'",
                              {c.bootstrap}, rd_kafka_error_string(e));
    }
    const rd_kafka_topic_partition_list_t* parts = rd_kafka_group_result_partitions(groups[i]);
    for (int p = 0; parts != nullptr && p < parts->cnt; ++p) {
      const auto& tp = parts->elems[p];
      if (tp.offset >= 0) out.push_back({tp.topic, tp.partition, tp.offset});
    }
  }
  return out;
}

const std::string& AdminClient::bootstrap() const { return impl_->client.bootstrap; }

}  // namespace tokenfeed::kafka
