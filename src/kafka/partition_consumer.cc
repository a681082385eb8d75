#include "kafka/partition_consumer.h"

#include "kafka/consumer_core.h"
#include "kafka/kafka_error.h"
#include "kafka/kafka_uri.h"

namespace tokenfeed::kafka {
namespace {

// No group is joined (assign, never subscribe) and nothing is committed;
// librdkafka still wants a group id for assign().
constexpr const char* kReaderGroup = "tokenfeed-partition-reader";

const std::vector<PinnedSetting>& ReaderPinned() {
  static const std::vector<PinnedSetting> pinned = {
      {"enable.auto.commit", "false", "the read position belongs to the caller's checkpoint, not to Kafka"},
      {"enable.auto.offset.store", "false", "the read position belongs to the caller's checkpoint, not to Kafka"},
      {"enable.partition.eof", "true", "the reader needs to know where a partition ends"},
  };
  return pinned;
}

}  // namespace

struct PartitionConsumer::Impl {
  PartitionConsumerOptions options;
  std::unique_ptr<ConsumerCore> core;
  int32_t partitions = 0;
  std::vector<int32_t> assigned;

  ErrorWhere Where(int32_t partition = -1, int64_t offset = -1) const {
    return {core->client().bootstrap, options.topic, partition, offset};
  }

  Status CheckPartition(int32_t partition) const {
    if (partition < 0 || partition >= partitions) {
      return Status::NotFound("Kafka partition " + std::to_string(partition) + " of topic '" + options.topic +
                              "' does not exist: the topic has partitions 0.." + std::to_string(partitions - 1));
    }
    return Status::OK();
  }
};

PartitionConsumer::PartitionConsumer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PartitionConsumer::~PartitionConsumer() = default;

Result<std::unique_ptr<PartitionConsumer>> PartitionConsumer::Open(const PartitionConsumerOptions& options,
                                                                   const std::vector<PartitionOffset>& assignment) {
  TF_RETURN_IF_ERROR(ValidateTopicName(options.topic));
  std::vector<DefaultSetting> defaults = ConsumerFetchDefaults();
  defaults.push_back({"group.id", kReaderGroup});
  // An offset the log no longer holds is an error, never a silent jump.
  defaults.push_back({"auto.offset.reset", "error"});
  TF_ASSIGN_OR_RETURN(Client client, CreateClient(RD_KAFKA_CONSUMER, options, defaults, ReaderPinned()));
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  TF_ASSIGN_OR_RETURN(impl->partitions, options.wait_for_new_topic ? FetchPartitionCount(client, options.topic)
                                                                   : FetchPartitionCountOnce(client, options.topic));
  impl->core = std::make_unique<ConsumerCore>(std::move(client));
  TF_RETURN_IF_ERROR(impl->core->RedirectToConsumerQueue());
  std::unique_ptr<PartitionConsumer> consumer(new PartitionConsumer(std::move(impl)));
  TF_RETURN_IF_ERROR(consumer->Assign(assignment));
  return consumer;
}

Status PartitionConsumer::Assign(const std::vector<PartitionOffset>& assignment) {
  Impl& s = *impl_;
  for (const auto& a : assignment) {
    TF_RETURN_IF_ERROR(s.CheckPartition(a.partition));
    if (a.offset < 0 && a.offset != kOffsetBeginning && a.offset != kOffsetEnd) {
      return Status::InvalidArgument("Kafka start offset " + std::to_string(a.offset) + " for partition " +
                                     std::to_string(a.partition) + " of topic '" + s.options.topic +
                                     "': use an offset >= 0, or the beginning or the end");
    }
  }
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(static_cast<int>(assignment.size()));
  for (const auto& a : assignment) {
    rd_kafka_topic_partition_list_add(list, s.options.topic.c_str(), a.partition)->offset = a.offset;
  }
  const rd_kafka_resp_err_t err = rd_kafka_assign(s.core->rk(), list);
  rd_kafka_topic_partition_list_destroy(list);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return KafkaErrorStatus(err, "Kafka assign partitions", s.Where());
  s.core->ForgetPartitions();
  s.assigned.clear();
  for (const auto& a : assignment) {
    s.core->ResetPartition(s.options.topic, a.partition, a.offset);
    s.assigned.push_back(a.partition);
  }
  return Status::OK();
}

Result<MessageBatch> PartitionConsumer::Poll(size_t max_records, std::chrono::milliseconds timeout) {
  return impl_->core->Poll(max_records, timeout);
}

Status PartitionConsumer::Seek(int32_t partition, int64_t offset) {
  Impl& s = *impl_;
  TF_RETURN_IF_ERROR(s.CheckPartition(partition));
  if (s.core->Find(s.options.topic, partition) == nullptr) {
    return Status::InvalidArgument("Kafka seek: partition " + std::to_string(partition) + " of topic '" +
                                   s.options.topic + "' is not assigned to this consumer");
  }
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(list, s.options.topic.c_str(), partition)->offset = offset;
  rd_kafka_error_t* error = rd_kafka_seek_partitions(s.core->rk(), list, TimeoutMs(s.core->client().timeout));
  rd_kafka_resp_err_t part_err = list->elems[0].err;
  rd_kafka_topic_partition_list_destroy(list);
  TF_RETURN_IF_ERROR(ConsumeKafkaError(error, "Kafka seek", s.Where(partition, offset)));
  if (part_err != RD_KAFKA_RESP_ERR_NO_ERROR) return KafkaErrorStatus(part_err, "Kafka seek", s.Where(partition, offset));
  s.core->ResetPartition(s.options.topic, partition, offset);
  return Status::OK();
}

Status PartitionConsumer::SetPaused(int32_t partition, bool paused) {
  Impl& s = *impl_;
  TF_RETURN_IF_ERROR(s.CheckPartition(partition));
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(list, s.options.topic.c_str(), partition);
  const rd_kafka_resp_err_t err =
      paused ? rd_kafka_pause_partitions(s.core->rk(), list) : rd_kafka_resume_partitions(s.core->rk(), list);
  const rd_kafka_resp_err_t part_err = list->elems[0].err;
  rd_kafka_topic_partition_list_destroy(list);
  const char* what = paused ? "Kafka pause" : "Kafka resume";
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return KafkaErrorStatus(err, what, s.Where(partition));
  if (part_err != RD_KAFKA_RESP_ERR_NO_ERROR) return KafkaErrorStatus(part_err, what, s.Where(partition));
  return Status::OK();
}

Status PartitionConsumer::Pause(int32_t partition) { return SetPaused(partition, true); }
Status PartitionConsumer::Resume(int32_t partition) { return SetPaused(partition, false); }

bool PartitionConsumer::AtEnd(int32_t partition) const {
  const auto* st = impl_->core->Find(impl_->options.topic, partition);
  return st != nullptr && st->at_end;
}

bool PartitionConsumer::AllAtEnd() const {
  for (int32_t p : impl_->assigned) {
    if (!AtEnd(p)) return false;
  }
  return true;
}

std::optional<int64_t> PartitionConsumer::Position(int32_t partition) const {
  const auto* st = impl_->core->Find(impl_->options.topic, partition);
  if (st == nullptr || st->position < 0) return std::nullopt;
  return st->position;
}

Result<Watermarks> PartitionConsumer::QueryWatermarks(int32_t partition) {
  Impl& s = *impl_;
  TF_RETURN_IF_ERROR(s.CheckPartition(partition));
  TF_ASSIGN_OR_RETURN(auto w, kafka::QueryWatermarks(s.core->client(), s.options.topic, partition));
  return Watermarks{w.first, w.second};
}

const std::string& PartitionConsumer::topic() const { return impl_->options.topic; }
int32_t PartitionConsumer::partition_count() const { return impl_->partitions; }

}  // namespace tokenfeed::kafka
