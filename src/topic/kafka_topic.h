// The Kafka side of topic.h: TopicWriter, DescribeTopic and PartitionCursor
// over tokenfeed::kafka (an idempotent, gapless producer; explicit-offset
// consumers that never commit). Internal to src/topic, except
// KafkaClientOptionsFor, which the streaming service shares so that -X and
// --kafka-config mean the same for every command.
// A written record is visible to cursors once Flush returned (acknowledged
// by every in-sync replica, acks=all). One thread per writer or cursor.
#pragma once

#include <string>
#include <string_view>

#include "kafka/client_options.h"
#include "kafka/kafka_uri.h"
#include "topic/topic.h"

namespace tokenfeed::topic {

// The client options for the cluster of a kafka:// URI: its bootstrap
// servers, then config.kafka_config_file, then config.kafka_properties (later
// ones winning), config.kafka_timeout. Fills *parsed with the URI's parts.
Result<kafka::ClientOptions> KafkaClientOptionsFor(std::string_view uri, const TopicConfig& config,
                                                   kafka::KafkaUri* parsed);

Result<std::unique_ptr<TopicWriter>> OpenKafkaTopicWriter(std::string_view uri, const WriterConfig& config,
                                                          std::vector<PartitionId> partitions);
Result<TopicSummary> DescribeKafkaTopic(std::string_view uri, const TopicConfig& config);
Result<std::unique_ptr<PartitionCursor>> OpenKafkaPartitionCursor(std::string_view uri, PartitionId partition,
                                                                  const TopicConfig& config);

}  // namespace tokenfeed::topic
