#include "tokenfeed/topic.h"

#include <cstring>

#include "topic/log_topic.h"

#if TOKENFEED_HAS_KAFKA
#include "topic/kafka_topic.h"
#endif

namespace tokenfeed::topic {

Result<TopicKind> KindOf(std::string_view uri) {
  if (uri.starts_with("log:")) return TopicKind::kLog;
  if (uri.starts_with("kafka://")) return TopicKind::kKafka;
  return Status::InvalidArgument("'" + std::string(uri) +
                                 "' is not a topic URI: use log:DIR/TOPIC (embedded log) or "
                                 "kafka://HOST:PORT[,HOST:PORT]/TOPIC");
}

Result<TransportHints> HintsFor(std::string_view uri) {
  TF_ASSIGN_OR_RETURN(TopicKind kind, KindOf(uri));
  TransportHints h;
  if (kind == TopicKind::kKafka) {
    h.block_records = 4096;
    h.cheap_snapshot_check = false;
  }
  return h;
}

namespace {
[[maybe_unused]] Status KafkaNotBuilt(std::string_view uri) {
  return Status::Unsupported("'" + std::string(uri) +
                             "': this build of tokenfeed has no Kafka transport (configure with "
                             "-DTOKENFEED_WITH_KAFKA=ON and librdkafka installed)");
}
}  // namespace

Status TopicWriter::Append(PartitionId partition, std::span<const std::span<const uint8_t>> records) {
  for (const auto& r : records) {
    Result<std::span<uint8_t>> dest = Reserve(partition, r.size());
    if (!dest.ok()) {
      (void)Abandon(partition);  // all or nothing: no prefix of `records` is committed later
      return dest.status();
    }
    if (!r.empty()) std::memcpy(dest->data(), r.data(), r.size());
  }
  return Commit(partition);
}

Result<std::unique_ptr<TopicWriter>> OpenTopicWriter(std::string_view uri, const WriterConfig& config,
                                                     std::vector<PartitionId> partitions) {
  TF_ASSIGN_OR_RETURN(TopicKind kind, KindOf(uri));
  if (kind == TopicKind::kLog) return OpenLogTopicWriter(uri, config, std::move(partitions));
#if TOKENFEED_HAS_KAFKA
  return OpenKafkaTopicWriter(uri, config, std::move(partitions));
#else
  return KafkaNotBuilt(uri);
#endif
}

Result<TopicSummary> DescribeTopic(std::string_view uri, const TopicConfig& config) {
  TF_ASSIGN_OR_RETURN(TopicKind kind, KindOf(uri));
  if (kind == TopicKind::kLog) return DescribeLogTopic(uri);
#if TOKENFEED_HAS_KAFKA
  return DescribeKafkaTopic(uri, config);
#else
  (void)config;
  return KafkaNotBuilt(uri);
#endif
}

Result<std::unique_ptr<PartitionCursor>> OpenPartitionCursor(std::string_view uri, PartitionId partition,
                                                             const TopicConfig& config) {
  TF_ASSIGN_OR_RETURN(TopicKind kind, KindOf(uri));
  if (kind == TopicKind::kLog) return OpenLogPartitionCursor(uri, partition, config);
#if TOKENFEED_HAS_KAFKA
  return OpenKafkaPartitionCursor(uri, partition, config);
#else
  return KafkaNotBuilt(uri);
#endif
}

}  // namespace tokenfeed::topic
