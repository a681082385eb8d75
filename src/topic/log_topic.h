// The embedded-log side of topic.h: TopicWriter and PartitionCursor over
// tokenfeed::log. Internal to src/topic.
#pragma once

#include "log/log.h"
#include "tokenfeed/topic.h"

namespace tokenfeed::topic {

Result<std::unique_ptr<TopicWriter>> OpenLogTopicWriter(std::string_view uri, const WriterConfig& config,
                                                        std::vector<PartitionId> partitions);
Result<TopicSummary> DescribeLogTopic(std::string_view uri);
Result<std::unique_ptr<PartitionCursor>> OpenLogPartitionCursor(std::string_view uri, PartitionId partition,
                                                                const TopicConfig& config);

}  // namespace tokenfeed::topic
