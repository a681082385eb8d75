#include "topic/topic.h"

#include "topic/log_topic.h"

namespace tokenfeed::topic {

Result<TopicKind> KindOf(std::string_view uri) {
  if (uri.starts_with("log:")) return TopicKind::kLog;
  if (uri.starts_with("kafka://")) return TopicKind::kKafka;
  return Status::InvalidArgument("'" + std::string(uri) +
                                 "' is not a topic URI: use log:DIR/TOPIC (embedded log) or "
                                 "kafka://HOST:PORT[,HOST:PORT]/TOPIC");
}

namespace {
Status KafkaNotBuilt(std::string_view uri) {
  return Status::Unsupported("'" + std::string(uri) + "': this build of tokenfeed has no Kafka transport");
}
}  // namespace

Result<std::unique_ptr<TopicWriter>> OpenTopicWriter(std::string_view uri, const WriterConfig& config,
                                                     std::vector<PartitionId> partitions) {
  TF_ASSIGN_OR_RETURN(TopicKind kind, KindOf(uri));
  if (kind == TopicKind::kLog) return OpenLogTopicWriter(uri, config, std::move(partitions));
  return KafkaNotBuilt(uri);
}

Result<TopicSummary> DescribeTopic(std::string_view uri, const TopicConfig&) {
  TF_ASSIGN_OR_RETURN(TopicKind kind, KindOf(uri));
  if (kind == TopicKind::kLog) return DescribeLogTopic(uri);
  return KafkaNotBuilt(uri);
}

Result<std::unique_ptr<PartitionCursor>> OpenPartitionCursor(std::string_view uri, PartitionId partition,
                                                             const TopicConfig& config) {
  TF_ASSIGN_OR_RETURN(TopicKind kind, KindOf(uri));
  if (kind == TopicKind::kLog) return OpenLogPartitionCursor(uri, partition, config);
  return KafkaNotBuilt(uri);
}

}  // namespace tokenfeed::topic
