#include "kafka/group_consumer.h"

#include <librdkafka/rdkafka.h>

#include <string_view>

#include "kafka/consumer_core.h"
#include "kafka/kafka_error.h"
#include "kafka/kafka_uri.h"

namespace tokenfeed::kafka {

void ConsumerGroupMetadata::Deleter::operator()(rd_kafka_consumer_group_metadata_s* m) const {
  if (m != nullptr) rd_kafka_consumer_group_metadata_destroy(m);
}

namespace {

// What the rebalance callback touches: it outlives the handle's last callback
// because ~Impl detaches it before the consumer closes.
struct RebalanceState {
  ConsumerCore* core = nullptr;
  bool changed = false;
  Status error;
};

void ApplyRebalance(RebalanceState* st, rd_kafka_t* rk, rd_kafka_resp_err_t err,
                    rd_kafka_topic_partition_list_t* parts) {
  const bool cooperative = std::string_view(rd_kafka_rebalance_protocol(rk)) == "COOPERATIVE";
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    if (cooperative) {
      if (rd_kafka_error_t* e = rd_kafka_incremental_assign(rk, parts)) {
        st->error = ConsumeKafkaError(e, "Kafka incremental assign", {});
      }
    } else if (rd_kafka_resp_err_t e = rd_kafka_assign(rk, parts); e != RD_KAFKA_RESP_ERR_NO_ERROR) {
      st->error = KafkaErrorStatus(e, "Kafka assign", {});
    }
  } else {
    if (cooperative) {
      if (rd_kafka_error_t* e = rd_kafka_incremental_unassign(rk, parts)) {
        st->error = ConsumeKafkaError(e, "Kafka incremental unassign", {});
      }
    } else {
      (void)rd_kafka_assign(rk, nullptr);
    }
  }
  if (st->core == nullptr) return;  // closing
  // Runs inside Poll before the new assignment's records are handed out, so
  // stale positions never mix with fresh ones.
  for (int i = 0; i < parts->cnt; ++i) st->core->ForgetPartition(parts->elems[i].topic, parts->elems[i].partition);
  st->changed = true;
}

}  // namespace

struct GroupConsumer::Impl {
  GroupConsumerOptions options;
  std::unique_ptr<RebalanceState> rebalance = std::make_unique<RebalanceState>();
  std::unique_ptr<ConsumerCore> core;
  ~Impl() {
    rebalance->core = nullptr;
    core.reset();  // closes: the last rebalance callback sees core == nullptr
  }
};

GroupConsumer::GroupConsumer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GroupConsumer::~GroupConsumer() = default;

Result<std::unique_ptr<GroupConsumer>> GroupConsumer::Open(const GroupConsumerOptions& options) {
  if (options.group_id.empty()) return Status::InvalidArgument("Kafka group consumer needs a group id");
  if (options.topics.empty()) return Status::InvalidArgument("Kafka group consumer needs at least one topic");
  for (const auto& t : options.topics) TF_RETURN_IF_ERROR(ValidateTopicName(t));
  std::vector<DefaultSetting> defaults = ConsumerFetchDefaults();
  defaults.push_back({"group.id", options.group_id});
  defaults.push_back({"auto.offset.reset", "earliest"});
  defaults.push_back({"enable.auto.offset.store", "false"});
  static const std::vector<PinnedSetting> pinned = {
      {"enable.auto.commit", "false", "offsets are committed in the service's transactions, never on a timer"},
  };
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  auto events = std::make_unique<ClientEvents>();
  RebalanceState* state = impl->rebalance.get();
  events->on_rebalance = [state](rd_kafka_t* rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* parts) {
    ApplyRebalance(state, rk, err, parts);
  };
  TF_ASSIGN_OR_RETURN(Client client, CreateClient(RD_KAFKA_CONSUMER, options, defaults, pinned, std::move(events)));
  for (const auto& t : options.topics) TF_RETURN_IF_ERROR(FetchPartitionCount(client, t).status());
  impl->core = std::make_unique<ConsumerCore>(std::move(client));
  state->core = impl->core.get();
  TF_RETURN_IF_ERROR(impl->core->RedirectToConsumerQueue());
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(static_cast<int>(options.topics.size()));
  for (const auto& t : options.topics) rd_kafka_topic_partition_list_add(list, t.c_str(), RD_KAFKA_PARTITION_UA);
  const rd_kafka_resp_err_t err = rd_kafka_subscribe(impl->core->rk(), list);
  rd_kafka_topic_partition_list_destroy(list);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaErrorStatus(err, "Kafka subscribe (group '" + options.group_id + "')",
                            {impl->core->client().bootstrap});
  }
  return std::unique_ptr<GroupConsumer>(new GroupConsumer(std::move(impl)));
}

Result<MessageBatch> GroupConsumer::Poll(size_t max_records, std::chrono::milliseconds timeout) {
  auto batch = impl_->core->Poll(max_records, timeout);
  if (Status s = impl_->core->client().events->CallbackFailure(); !s.ok()) {
    return s.WithContext("Kafka consumer (group '" + impl_->options.group_id + "')");
  }
  // Records already taken from the queue are handed out first.
  if (!impl_->rebalance->error.ok() && !(batch.ok() && !batch->empty())) {
    Status s = std::move(impl_->rebalance->error);
    impl_->rebalance->error = Status::OK();
    return s.WithContext("group '" + impl_->options.group_id + "'");
  }
  return batch;
}

bool GroupConsumer::TakeAssignmentChange() {
  const bool changed = impl_->rebalance->changed;
  impl_->rebalance->changed = false;
  return changed;
}

Result<std::vector<TopicPartitionOffset>> GroupConsumer::Assignment() const {
  rd_kafka_topic_partition_list_t* list = nullptr;
  if (rd_kafka_resp_err_t err = rd_kafka_assignment(impl_->core->rk(), &list); err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaErrorStatus(err, "Kafka consumer assignment", {impl_->core->client().bootstrap});
  }
  std::vector<TopicPartitionOffset> out;
  for (int i = 0; i < list->cnt; ++i) out.push_back({list->elems[i].topic, list->elems[i].partition, list->elems[i].offset});
  rd_kafka_topic_partition_list_destroy(list);
  return out;
}

Result<std::vector<TopicPartitionOffset>> GroupConsumer::Positions() const {
  TF_ASSIGN_OR_RETURN(std::vector<TopicPartitionOffset> assigned, Assignment());
  std::vector<TopicPartitionOffset> out;
  for (const auto& a : assigned) {
    const auto* st = impl_->core->Find(a.topic, a.partition);
    if (st != nullptr && st->position >= 0) out.push_back({a.topic, a.partition, st->position});
  }
  return out;
}

Result<ConsumerGroupMetadata> GroupConsumer::GroupMetadata() const {
  rd_kafka_consumer_group_metadata_t* m = rd_kafka_consumer_group_metadata(impl_->core->rk());
  if (m == nullptr) return Status::Internal("Kafka consumer has no group metadata");
  return ConsumerGroupMetadata(m);
}

Status GroupConsumer::RewindToCommitted() {
  rd_kafka_t* rk = impl_->core->rk();
  const Client& client = impl_->core->client();
  const std::string group = "group '" + impl_->options.group_id + "'";
  rd_kafka_topic_partition_list_t* list = nullptr;
  if (rd_kafka_resp_err_t err = rd_kafka_assignment(rk, &list); err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaErrorStatus(err, "Kafka consumer assignment (" + group + ")", {client.bootstrap});
  }
  Status status;
  if (list->cnt > 0) {
    // read_committed consumers ask for stable offsets: a transaction that is
    // still committing makes the broker answer "retry", not a stale offset.
    rd_kafka_resp_err_t err = rd_kafka_committed(rk, list, TimeoutMs(client.timeout));
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      status = KafkaErrorStatus(err, "Kafka committed offsets (" + group + ")", {client.bootstrap});
    }
    for (int i = 0; status.ok() && i < list->cnt; ++i) {
      rd_kafka_topic_partition_t& tp = list->elems[i];
      if (tp.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        status = KafkaErrorStatus(tp.err, "Kafka committed offset (" + group + ")",
                                  {client.bootstrap, tp.topic, tp.partition});
      }
      if (tp.offset < 0) tp.offset = RD_KAFKA_OFFSET_BEGINNING;
    }
    if (status.ok()) {
      rd_kafka_error_t* error = rd_kafka_seek_partitions(rk, list, TimeoutMs(client.timeout));
      status = ConsumeKafkaError(error, "Kafka seek to committed offsets (" + group + ")", {client.bootstrap});
      for (int i = 0; status.ok() && i < list->cnt; ++i) {
        const rd_kafka_topic_partition_t& tp = list->elems[i];
        if (tp.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
          status = KafkaErrorStatus(tp.err, "Kafka seek to committed offset (" + group + ")",
                                    {client.bootstrap, tp.topic, tp.partition, tp.offset});
        } else {
          impl_->core->ResetPartition(tp.topic, tp.partition, tp.offset);
        }
      }
    }
  }
  rd_kafka_topic_partition_list_destroy(list);
  return status;
}

std::vector<GroupConsumer::PartitionLag> GroupConsumer::Lag() const {
  std::vector<PartitionLag> out;
  rd_kafka_t* rk = impl_->core->rk();
  rd_kafka_topic_partition_list_t* list = nullptr;
  if (rd_kafka_assignment(rk, &list) != RD_KAFKA_RESP_ERR_NO_ERROR) return out;
  for (int i = 0; i < list->cnt; ++i) {
    const rd_kafka_topic_partition_t& tp = list->elems[i];
    PartitionLag lag;
    lag.topic = tp.topic;
    lag.partition = tp.partition;
    if (const auto* st = impl_->core->Find(tp.topic, tp.partition)) lag.position = st->position;
    int64_t low = -1, high = -1;
    if (rd_kafka_get_watermark_offsets(rk, tp.topic, tp.partition, &low, &high) == RD_KAFKA_RESP_ERR_NO_ERROR) {
      lag.high_watermark = high >= 0 ? high : -1;
    }
    out.push_back(std::move(lag));
  }
  rd_kafka_topic_partition_list_destroy(list);
  return out;
}

Status GroupConsumer::Close() {
  impl_->rebalance->core = nullptr;
  const rd_kafka_resp_err_t err = impl_->core->Close();
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaErrorStatus(err, "Kafka consumer close (group '" + impl_->options.group_id + "')",
                            {impl_->core->client().bootstrap});
  }
  return Status::OK();
}

}  // namespace tokenfeed::kafka
