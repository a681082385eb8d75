#include "kafka/group_consumer.h"

#include <librdkafka/rdkafka.h>

#include "kafka/consumer_core.h"
#include "kafka/kafka_error.h"
#include "kafka/kafka_uri.h"

namespace tokenfeed::kafka {

void ConsumerGroupMetadata::Deleter::operator()(rd_kafka_consumer_group_metadata_s* m) const {
  if (m != nullptr) rd_kafka_consumer_group_metadata_destroy(m);
}

struct GroupConsumer::Impl {
  GroupConsumerOptions options;
  std::unique_ptr<ConsumerCore> core;
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
  TF_ASSIGN_OR_RETURN(Client client, CreateClient(RD_KAFKA_CONSUMER, options, defaults, pinned));
  for (const auto& t : options.topics) TF_RETURN_IF_ERROR(FetchPartitionCount(client, t).status());
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->core = std::make_unique<ConsumerCore>(std::move(client));
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
  return impl_->core->Poll(max_records, timeout);
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

Status GroupConsumer::Close() {
  const rd_kafka_resp_err_t err = impl_->core->Close();
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaErrorStatus(err, "Kafka consumer close (group '" + impl_->options.group_id + "')",
                            {impl_->core->client().bootstrap});
  }
  return Status::OK();
}

}  // namespace tokenfeed::kafka
