// The Kafka side of topic.h: TopicWriter, DescribeTopic and PartitionCursor
// over tokenfeed::kafka (an idempotent, gapless producer; explicit-offset
// consumers that never commit). Internal to src/topic.
// A written record is visible to cursors once Flush returned (acknowledged
// by every in-sync replica, acks=all). One thread per writer or cursor.
#pragma once

#include <string>
#include <string_view>

#include "kafka/client_config.h"
#include "kafka/client_options.h"
#include "kafka/kafka_uri.h"
#include "tokenfeed/topic.h"

namespace tokenfeed::topic {

Result<std::unique_ptr<TopicWriter>> OpenKafkaTopicWriter(std::string_view uri, const WriterConfig& config,
                                                          std::vector<PartitionId> partitions);
Result<TopicSummary> DescribeKafkaTopic(std::string_view uri, const TopicConfig& config);
// The client options of `config` for a kafka:// URI (parsed into *parsed);
// `defaults` go under the user's properties.
Result<kafka::ClientOptions> KafkaClientOptionsFor(std::string_view uri, const TopicConfig& config,
                                                   kafka::KafkaUri* parsed,
                                                   const std::vector<std::string>& defaults = {});
// Sets the producer properties every topic writer needs (no record may time
// out or leave a gap); InvalidArgument when the user's properties set
// another value for one of them.
Status ApplyWriterSettings(kafka::ClientConfig* config);
// wait_for_new_topic: as kafka::PartitionConsumerOptions's.
Result<std::unique_ptr<PartitionCursor>> OpenKafkaPartitionCursor(std::string_view uri, PartitionId partition,
                                                                  const TopicConfig& config,
                                                                  bool wait_for_new_topic = true);

}  // namespace tokenfeed::topic
