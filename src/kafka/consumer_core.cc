#include "kafka/consumer_core.h"

#include "kafka/kafka_error.h"

namespace tokenfeed::kafka {

std::vector<DefaultSetting> ConsumerFetchDefaults() {
  return {
      // One fetch response may carry 64 MiB, 4 MiB of it from one partition:
      // four times librdkafka's default, which doubles the uncompressed rate
      // from a local broker (bench/kafka/run.sh); larger partition fetches
      // gained nothing more.
      {"fetch.max.bytes", "67108864"},
      {"max.partition.fetch.bytes", "4194304"},
      {"receive.message.max.bytes", "68157440"},  // fetch.max.bytes + 1 MiB of framing
      // Prefetch up to 256 MiB so the next batch is ready while the caller works.
      {"queued.max.messages.kbytes", "262144"},
      {"queued.min.messages", "100000"},
      {"fetch.wait.max.ms", "100"},
      {"fetch.error.backoff.ms", "100"},
      {"check.crcs", "false"},
      {"isolation.level", "read_committed"},
  };
}

ConsumerCore::ConsumerCore(Client client) : client_(std::move(client)) {}

ConsumerCore::~ConsumerCore() {
  if (queue_ != nullptr) {
    if (client_.statistics) ServeWaitingReports();
    rd_kafka_queue_destroy(queue_);
  }
  (void)Close();
}

// librdkafka queues its statistics reports on the consumer queue, and calls
// the statistics callback only when that queue is served (a read): a client
// that has not read since its latest report would take it, and what it
// fetched since its last read, to the grave. Before the queue goes, serve what
// waits in it (bounded: at most 64 x 1024 entries; fetched records are
// dropped, the client is closing).
void ConsumerCore::ServeWaitingReports() {
  std::vector<rd_kafka_message_t*> drop(1024);
  for (int round = 0; round < 64; ++round) {
    const ssize_t n = rd_kafka_consume_batch_queue(queue_, 0, drop.data(), drop.size());
    if (n <= 0) return;
    for (ssize_t i = 0; i < n; ++i) rd_kafka_message_destroy(drop[static_cast<size_t>(i)]);
  }
}

rd_kafka_resp_err_t ConsumerCore::Close() {
  if (closed_ || !client_.handle) return RD_KAFKA_RESP_ERR_NO_ERROR;
  closed_ = true;
  return rd_kafka_consumer_close(client_.handle.get());
}

Status ConsumerCore::RedirectToConsumerQueue() {
  if (rd_kafka_resp_err_t err = rd_kafka_poll_set_consumer(rk()); err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaErrorStatus(err, "Kafka consumer set-up", {client_.bootstrap});
  }
  queue_ = rd_kafka_queue_get_consumer(rk());
  if (queue_ == nullptr) return Status::Internal("Kafka consumer has no consumer queue");
  return Status::OK();
}

void ConsumerCore::ResetPartition(const std::string& topic, int32_t partition, int64_t offset) {
  PartitionState& s = partitions_[{topic, partition}];
  s.position = offset >= 0 ? offset : -1;
  s.at_end = false;
}

void ConsumerCore::ForgetPartitions() { partitions_.clear(); }

void ConsumerCore::ForgetPartition(const std::string& topic, int32_t partition) {
  partitions_.erase({topic, partition});
}

const ConsumerCore::PartitionState* ConsumerCore::Find(const std::string& topic, int32_t partition) const {
  auto it = partitions_.find({topic, partition});
  return it == partitions_.end() ? nullptr : &it->second;
}

Status ConsumerCore::ErrorFromMessage(const rd_kafka_message_t& m) {
  const std::string topic = m.rkt != nullptr ? rd_kafka_topic_name(m.rkt) : "";
  const char* text = rd_kafka_message_errstr(&m);
  std::string detail = text != nullptr ? text : rd_kafka_err2str(m.err);
  if (m.err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET || m.err == RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE) {
    int64_t low = -1, high = -1;
    if (rd_kafka_query_watermark_offsets(rk(), topic.c_str(), m.partition, &low, &high,
                                         TimeoutMs(client_.timeout)) == RD_KAFKA_RESP_ERR_NO_ERROR) {
      detail += "; the partition holds offsets " + std::to_string(low) + " up to " + std::to_string(high) +
                " (exclusive)";
    }
    return KafkaErrorStatus(m.err, "Kafka offset out of range", {client_.bootstrap, topic, m.partition, m.offset},
                            detail);
  }
  return KafkaErrorStatus(m.err, "Kafka consumer error", {client_.bootstrap, topic, m.partition}, detail);
}

Status ConsumerCore::CheckBrokersReachable() {
  const auto since = client_.events->AllBrokersDownSince();
  if (since == std::chrono::steady_clock::time_point{}) return Status::OK();
  const auto down_for = std::chrono::steady_clock::now() - since;
  if (down_for < client_.timeout) return Status::OK();
  // librdkafka says when all brokers go down but not when one comes back:
  // ask before declaring the cluster unavailable.
  const struct rd_kafka_metadata* md = nullptr;
  if (rd_kafka_metadata(rk(), 0, nullptr, &md, TimeoutMs(std::min(client_.timeout, std::chrono::milliseconds(5000)))) ==
      RD_KAFKA_RESP_ERR_NO_ERROR) {
    rd_kafka_metadata_destroy(md);
    client_.events->NoteBrokerUp();
    return Status::OK();
  }
  return Status::Unavailable(
      "no Kafka broker of " + client_.bootstrap + " reachable for " +
      std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(down_for).count()) + " ms" +
      client_.events->LastProblemSuffix() + "; check that the brokers run and are reachable");
}

Result<MessageBatch> ConsumerCore::Poll(size_t max_records, std::chrono::milliseconds timeout) {
  if (!pending_error_.ok()) {
    Status s = std::move(pending_error_);
    pending_error_ = Status::OK();
    return s;
  }
  if (max_records == 0) return MessageBatch();
  if (buffer_.size() < max_records) buffer_.resize(max_records);
  // Take what is queued without waiting; wait only when nothing is, and only
  // for the first message (consume_batch_queue would otherwise wait out the
  // whole timeout for a full batch).
  ssize_t n = rd_kafka_consume_batch_queue(queue_, 0, buffer_.data(), max_records);
  if (n == 0 && timeout.count() > 0) {
    n = rd_kafka_consume_batch_queue(queue_, TimeoutMs(timeout), buffer_.data(), 1);
    if (n == 1 && max_records > 1) {
      const ssize_t more = rd_kafka_consume_batch_queue(queue_, 0, buffer_.data() + 1, max_records - 1);
      if (more > 0) n += more;
    }
  }
  if (n < 0) return KafkaErrorStatus(rd_kafka_last_error(), "Kafka consume", {client_.bootstrap});

  MessageBatch batch;
  batch.records_.reserve(static_cast<size_t>(n));
  batch.messages_.reserve(static_cast<size_t>(n));
  Status first_error;
  // Hot path: one pass over the messages; the partition state is looked up
  // once per run of messages from the same partition.
  PartitionState* state = nullptr;
  const rd_kafka_topic_t* state_rkt = nullptr;
  int32_t state_partition = -1;
  bool got_any = false;
  for (ssize_t i = 0; i < n; ++i) {
    rd_kafka_message_t* m = buffer_[static_cast<size_t>(i)];
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR || m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      got_any = true;
      if (state == nullptr || m->rkt != state_rkt || m->partition != state_partition) {
        state = &partitions_[{rd_kafka_topic_name(m->rkt), m->partition}];
        state_rkt = m->rkt;
        state_partition = m->partition;
      }
      if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        // The fetch position is the end: any offsets between the last record
        // and here hold transaction markers, not records.
        state->position = m->offset;
        state->at_end = true;
        rd_kafka_message_destroy(m);
        continue;
      }
      state->position = m->offset + 1;
      state->at_end = false;
      rd_kafka_timestamp_type_t ts_type;
      const int64_t ts = rd_kafka_message_timestamp(m, &ts_type);
      batch.records_.push_back(ConsumedRecord{
          rd_kafka_topic_name(m->rkt), m->partition, m->offset, ts_type == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE ? -1 : ts,
          std::span<const std::byte>(static_cast<const std::byte*>(m->key), m->key_len),
          std::span<const std::byte>(static_cast<const std::byte*>(m->payload), m->len)});
      batch.messages_.push_back(m);
      batch.value_bytes_ += m->len;
      continue;
    }
    if (m->err == RD_KAFKA_RESP_ERR__TRANSPORT || m->err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN) {
      // Transient: librdkafka reconnects by itself; CheckBrokersReachable bounds it.
      if (m->err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN) client_.events->NoteAllBrokersDown();
      client_.events->RecordProblem(rd_kafka_message_errstr(m));
      rd_kafka_message_destroy(m);
      continue;
    }
    if (first_error.ok()) first_error = ErrorFromMessage(*m);
    rd_kafka_message_destroy(m);
  }
  if (got_any) client_.events->NoteBrokerUp();
  if (!first_error.ok()) {
    if (batch.empty()) return first_error;
    pending_error_ = std::move(first_error);
    return batch;
  }
  if (batch.empty() && !got_any) TF_RETURN_IF_ERROR(CheckBrokersReachable());
  return batch;
}

}  // namespace tokenfeed::kafka
