// The Kafka side of topic.h: TopicWriter, DescribeTopic and PartitionCursor
// over tokenfeed::kafka (an idempotent, gapless producer; explicit-offset
// consumers that never commit). Internal to src/topic.
// A written record is visible to cursors once Flush returned (acknowledged
// by every in-sync replica, acks=all). One thread per writer or cursor.
#pragma once

#include <string>
#include <string_view>

#include "tokenfeed/topic.h"

namespace tokenfeed::topic {

Result<std::unique_ptr<TopicWriter>> OpenKafkaTopicWriter(std::string_view uri, const WriterConfig& config,
                                                          std::vector<PartitionId> partitions);
Result<TopicSummary> DescribeKafkaTopic(std::string_view uri, const TopicConfig& config);
Result<std::unique_ptr<PartitionCursor>> OpenKafkaPartitionCursor(std::string_view uri, PartitionId partition,
                                                                  const TopicConfig& config);

}  // namespace tokenfeed::topic
