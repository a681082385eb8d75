#include "kafka/producer.h"

#include <charconv>
#include <map>
#include <optional>

#include "kafka/admin_request.h"
#include "kafka/kafka_error.h"
#include "kafka/kafka_uri.h"
#include "kafka/rdkafka_handle.h"

namespace tokenfeed::kafka {
namespace {

// Batching for token records of 4-64 KB (docs/kafka.md, "Producer settings"):
// a batch closes at 1 MB -- below the broker's default 1 MiB record-batch
// limit, so batches always fit a default topic -- or after 10 ms; the queue
// holds up to 256 MiB so that a burst of large records does not block.
std::vector<DefaultSetting> ProducerDefaults(const ProducerOptions& o) {
  std::vector<DefaultSetting> d = {
      {"acks", "all"},
      {"linger.ms", "10"},
      {"batch.size", "1000000"},
      {"batch.num.messages", "10000"},
      {"message.max.bytes", "1000000"},
      {"queue.buffering.max.kbytes", "262144"},
      {"queue.buffering.max.messages", "100000"},
      {"max.in.flight.requests.per.connection", "5"},
      {"compression.type", std::string(CompressionName(o.compression))},
      {"message.timeout.ms", std::to_string(o.timeout.count())},
      {"socket.timeout.ms", std::to_string(std::max<int64_t>(o.timeout.count(), 10))},
  };
  if (!o.transactional_id.empty()) {
    d.push_back({"transactional.id", o.transactional_id});
    // Must be at least message.timeout.ms.
    d.push_back({"transaction.timeout.ms", std::to_string(std::max<int64_t>(60000, o.timeout.count()))});
  }
  return d;
}

const std::vector<PinnedSetting>& ProducerPinned() {
  static const std::vector<PinnedSetting> pinned = {
      {"enable.idempotence", "true",
       "the producer is idempotent so that a retried batch is never written twice"},
  };
  return pinned;
}

}  // namespace

std::string_view CompressionName(Compression c) {
  switch (c) {
    case Compression::kNone: return "none";
    case Compression::kGzip: return "gzip";
    case Compression::kSnappy: return "snappy";
    case Compression::kLz4: return "lz4";
    case Compression::kZstd: return "zstd";
  }
  return "none";
}

Result<Compression> ParseCompression(std::string_view name) {
  for (Compression c : {Compression::kNone, Compression::kGzip, Compression::kSnappy, Compression::kLz4,
                        Compression::kZstd}) {
    if (name == CompressionName(c)) return c;
  }
  return Status::InvalidArgument("unknown Kafka compression '" + std::string(name) +
                                 "': use zstd, lz4, snappy, gzip or none");
}

struct Producer::Impl {
  ProducerOptions options;
  Client client;
  rd_kafka_topic_t* topic_handle = nullptr;
  int32_t partitions = 0;
  uint64_t produced = 0;
  uint64_t reported = 0;
  std::vector<Delivery> ready;  // filled by the delivery callback
  std::vector<size_t> oversized;  // indexes into `ready` rejected for their size
  std::map<std::string, std::optional<int64_t>> topic_limit;  // max.message.bytes, looked up once

  ~Impl() {
    if (topic_handle != nullptr) rd_kafka_topic_destroy(topic_handle);
    if (client.handle) {
      rd_kafka_purge(client.handle.get(), RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
      client.events->on_delivery = nullptr;
    }
  }

  ErrorWhere Where(int32_t partition = -1, int64_t offset = -1) const {
    return {client.bootstrap, options.topic, partition, offset};
  }

  void OnDelivery(const rd_kafka_message_t& m) {
    Delivery d;
    d.token = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(m._private));
    d.partition = m.partition;
    if (m.err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      d.offset = m.offset;
    } else {
      std::string what = "Kafka record (token " + std::to_string(d.token) + ", " + std::to_string(m.len) +
                         " bytes) not written";
      std::string detail = rd_kafka_err2str(m.err);
      if (m.err == RD_KAFKA_RESP_ERR__MSG_TIMED_OUT) {
        detail = "no acknowledgement within message.timeout.ms = " + std::to_string(options.timeout.count()) +
                 " ms" + client.events->LastProblemSuffix();
      }
      d.status = KafkaErrorStatus(m.err, what, Where(m.partition), detail);
      if (m.err == RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE || m.err == RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE) {
        oversized.push_back(ready.size());
      }
    }
    ready.push_back(std::move(d));
  }

  std::optional<int64_t> TopicLimit() {
    auto it = topic_limit.find(options.topic);
    if (it != topic_limit.end()) return it->second;
    std::optional<int64_t> limit;
    auto configs = DescribeTopicConfigs(client, options.topic);
    if (configs.ok()) {
      for (const auto& [k, v] : *configs) {
        int64_t n = 0;
        if (k == "max.message.bytes" && std::from_chars(v.data(), v.data() + v.size(), n).ec == std::errc()) limit = n;
      }
    }
    topic_limit[options.topic] = limit;
    return limit;
  }

  // The broker said "too large" without saying its limit: look it up (once)
  // so that the message names the limit and the setting to change.
  void ExplainOversized() {
    if (oversized.empty()) return;
    const std::optional<int64_t> limit = TopicLimit();
    for (size_t i : oversized) {
      Delivery& d = ready[i];
      std::string m = d.status.message();
      m.append(". Topic '").append(options.topic).append("' accepts record batches of at most ");
      m.append(limit ? std::to_string(*limit) + " bytes" : std::string("(unknown: the lookup failed)"));
      m.append(" (topic max.message.bytes; the broker default is message.max.bytes): raise max.message.bytes on "
               "the topic, or lower the producer's batch.size and message.max.bytes below it");
      d.status = Status(d.status.code(), std::move(m));
    }
    oversized.clear();
  }

  void TakeReady(std::vector<Delivery>* out) {
    ExplainOversized();
    reported += ready.size();
    if (out->empty()) {
      out->swap(ready);
    } else {
      for (auto& d : ready) out->push_back(std::move(d));
    }
    ready.clear();
  }

  Status FatalState() const {
    if (Status s = client.events->CallbackFailure(); !s.ok()) {
      return s.WithContext("Kafka producer" + DescribeWhere(Where()));
    }
    char errstr[512];
    rd_kafka_resp_err_t err = rd_kafka_fatal_error(client.handle.get(), errstr, sizeof errstr);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return Status::OK();
    return KafkaErrorStatus(err, "Kafka producer failed fatally", Where(),
                            std::string(errstr) + " (open a new producer)");
  }
};

Producer::Producer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Producer::~Producer() = default;

Result<std::unique_ptr<Producer>> Producer::Open(const ProducerOptions& options) {
  TF_RETURN_IF_ERROR(ValidateTopicName(options.topic));
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  auto events = std::make_unique<ClientEvents>();
  Impl* raw = impl.get();
  events->on_delivery = [raw](const rd_kafka_message_t& m) { raw->OnDelivery(m); };
  TF_ASSIGN_OR_RETURN(impl->client, CreateClient(RD_KAFKA_PRODUCER, options, ProducerDefaults(options),
                                                 ProducerPinned(), std::move(events)));
  TF_ASSIGN_OR_RETURN(impl->partitions, FetchPartitionCount(impl->client, options.topic));
  impl->topic_handle = rd_kafka_topic_new(impl->client.handle.get(), options.topic.c_str(), nullptr);
  if (impl->topic_handle == nullptr) {
    return KafkaErrorStatus(rd_kafka_last_error(), "cannot use Kafka topic", impl->Where());
  }
  return std::unique_ptr<Producer>(new Producer(std::move(impl)));
}

Status Producer::Produce(int32_t partition, std::span<const std::byte> key, std::span<const std::byte> value,
                         uint64_t token, std::span<const RecordHeader> headers) {
  Impl& s = *impl_;
  if (partition != kAnyPartition && (partition < 0 || partition >= s.partitions)) {
    return Status::InvalidArgument("Kafka partition " + std::to_string(partition) + " does not exist: topic '" +
                                   s.options.topic + "' has partitions 0.." + std::to_string(s.partitions - 1));
  }
  std::chrono::steady_clock::time_point deadline{};  // set when the queue is first full
  for (;;) {
    rd_kafka_headers_t* hdrs = nullptr;
    if (!headers.empty()) {
      hdrs = rd_kafka_headers_new(headers.size());
      for (const auto& h : headers) {
        rd_kafka_header_add(hdrs, h.name.data(), static_cast<ssize_t>(h.name.size()), h.value.data(),
                            static_cast<ssize_t>(h.value.size()));
      }
    }
    // Hot path: one call per record; the payload is copied into librdkafka's
    // batch buffer so the caller's memory is free on return.
    const rd_kafka_resp_err_t err = rd_kafka_producev(
        s.client.handle.get(), RD_KAFKA_V_RKT(s.topic_handle), RD_KAFKA_V_PARTITION(partition),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_VALUE(const_cast<std::byte*>(value.data()), value.size()),
        RD_KAFKA_V_KEY(key.data(), key.size()), RD_KAFKA_V_HEADERS(hdrs),
        RD_KAFKA_V_OPAQUE(reinterpret_cast<void*>(static_cast<uintptr_t>(token))), RD_KAFKA_V_END);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      ++s.produced;
      return Status::OK();
    }
    if (hdrs != nullptr) rd_kafka_headers_destroy(hdrs);  // not taken on failure
    if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL && deadline == std::chrono::steady_clock::time_point{}) {
      deadline = std::chrono::steady_clock::now() + s.options.timeout;
    }
    if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL && std::chrono::steady_clock::now() < deadline) {
      rd_kafka_poll(s.client.handle.get(), 10);
      continue;
    }
    const std::string what = "Kafka record (token " + std::to_string(token) + ") not queued";
    if (err == RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE) {
      const ConfigEntry* user = s.options.config.Find("message.max.bytes");
      const std::string limit = user != nullptr ? user->value : "1000000";
      return Status::ResourceExhausted(
          what + DescribeWhere(s.Where(partition)) + ": the record is " + std::to_string(value.size() + key.size()) +
          " bytes (value and key), more than the producer's message.max.bytes = " + limit +
          "; raise message.max.bytes on the producer (-X message.max.bytes=N) and max.message.bytes on the topic "
          "(the brokers' message.max.bytes by default), or write smaller records");
    }
    if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      return KafkaErrorStatus(err, what, s.Where(partition),
                              "the producer queue stayed full for " + std::to_string(s.options.timeout.count()) +
                                  " ms: the brokers are not acknowledging" + s.client.events->LastProblemSuffix());
    }
    if (err == RD_KAFKA_RESP_ERR__FATAL) return s.FatalState();
    return KafkaErrorStatus(err, what, s.Where(partition));
  }
}

Status Producer::PollDeliveries(std::chrono::milliseconds timeout, std::vector<Delivery>* out) {
  rd_kafka_poll(impl_->client.handle.get(), TimeoutMs(timeout));
  impl_->TakeReady(out);
  return impl_->FatalState();
}

Status Producer::Flush(std::chrono::milliseconds timeout, std::vector<Delivery>* out) {
  const rd_kafka_resp_err_t err = rd_kafka_flush(impl_->client.handle.get(), TimeoutMs(timeout));
  impl_->TakeReady(out);
  TF_RETURN_IF_ERROR(impl_->FatalState());
  if (err == RD_KAFKA_RESP_ERR__TIMED_OUT || InFlight() > 0) {
    return Status::TimedOut("Kafka producer flush" + DescribeWhere(impl_->Where()) + ": " +
                            std::to_string(InFlight()) + " records not acknowledged within " +
                            std::to_string(timeout.count()) + " ms" + impl_->client.events->LastProblemSuffix() +
                            "; they are still in flight: flush again or check the brokers");
  }
  return Status::OK();
}

size_t Producer::InFlight() const { return static_cast<size_t>(impl_->produced - impl_->reported); }

Status Producer::InitTransactions() {
  return ConsumeKafkaError(rd_kafka_init_transactions(impl_->client.handle.get(), TimeoutMs(impl_->options.timeout)),
                           "Kafka init transactions", impl_->Where());
}

Status Producer::BeginTransaction() {
  return ConsumeKafkaError(rd_kafka_begin_transaction(impl_->client.handle.get()), "Kafka begin transaction",
                           impl_->Where());
}

Status Producer::SendOffsetsToTransaction(std::span<const TopicPartitionOffset> next_offsets,
                                          const ConsumerGroupMetadata& group) {
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(static_cast<int>(next_offsets.size()));
  for (const auto& o : next_offsets) {
    rd_kafka_topic_partition_list_add(list, o.topic.c_str(), o.partition)->offset = o.offset;
  }
  rd_kafka_error_t* error = rd_kafka_send_offsets_to_transaction(impl_->client.handle.get(), list, group.get(),
                                                                 TimeoutMs(impl_->options.timeout));
  rd_kafka_topic_partition_list_destroy(list);
  return ConsumeKafkaError(error, "Kafka send offsets to transaction", impl_->Where());
}

Status Producer::CommitTransaction() {
  return ConsumeKafkaError(
      rd_kafka_commit_transaction(impl_->client.handle.get(), TimeoutMs(impl_->options.timeout)),
      "Kafka commit transaction", impl_->Where());
}

Status Producer::AbortTransaction() {
  return ConsumeKafkaError(rd_kafka_abort_transaction(impl_->client.handle.get(), TimeoutMs(impl_->options.timeout)),
                           "Kafka abort transaction", impl_->Where());
}

Producer::Failure Producer::failure() const {
  const rd_kafka_resp_err_t err = rd_kafka_fatal_error(impl_->client.handle.get(), nullptr, 0);
  switch (err) {
    case RD_KAFKA_RESP_ERR_NO_ERROR:
      return Failure::kNone;
    case RD_KAFKA_RESP_ERR__FENCED:
    case RD_KAFKA_RESP_ERR_PRODUCER_FENCED:
    case RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH:
      return Failure::kFenced;
    default:
      return Failure::kFatal;
  }
}

void Producer::InjectFatalErrorForTesting(std::string_view reason) {
  rd_kafka_test_fatal_error(impl_->client.handle.get(), RD_KAFKA_RESP_ERR_INVALID_TXN_STATE,
                            std::string(reason).c_str());
}

const std::string& Producer::topic() const { return impl_->options.topic; }
int32_t Producer::partition_count() const { return impl_->partitions; }
const std::string& Producer::bootstrap() const { return impl_->client.bootstrap; }

}  // namespace tokenfeed::kafka
