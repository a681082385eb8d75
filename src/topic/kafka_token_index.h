// The token index of a Kafka topic (docs/kafka.md, "Token index"): a
// companion topic, named by KafkaIndexTopicName, with as many partitions as
// the data topic; its partition p holds chunks (kafka_index_chunk.h) that
// describe data partition p's offsets one range after the other, from the
// partition's start offset when the index was first built. `tokenfeed index
// kafka://...` builds it, and extends it from where it ends when run again.
// The Kafka side of tokenfeed/token_index.h: the reader answers what the
// chunks cover, and counts the records past them by reading them (as the
// log's reader does past its TOKENS file). This is not a record reader and
// it never writes the data topic. Internal to src/topic.
// Durability: a chunk is written after the records it describes are
// readable, and only for offsets below the high watermark taken when the
// build started; a build that dies leaves whole chunks (each one Kafka
// record), which the next build continues. One builder per topic at a time
// (the caller's rule, as for writers); readers may run meanwhile.
// Thread-safety: one thread per reader or build.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenfeed/token_index.h"
#include "tokenfeed/topic.h"

namespace tokenfeed::topic {

// TOPIC-token-index: the index of topic TOPIC.
std::string KafkaIndexTopicName(std::string_view topic);

// TOPIC-token-summary: the summaries of that index (kafka_index_summary.h),
// one per chunk, with the same partitions.
std::string KafkaSummaryTopicName(std::string_view topic);

// A reader kept open (replay: every record's length): the chunks.
Result<std::unique_ptr<TokenIndexReader>> OpenKafkaTokenIndexReader(std::string_view uri, PartitionId partition,
                                                                    const TopicConfig& config);

// tokenfeed::topic::ReadTokenIndex for Kafka: from the summaries where they
// answer every offset asked (a loader's block boundaries, with blocks of a
// multiple of the summaries' group), else from the chunks.
Result<TokenIndexRead> ReadKafkaTokenIndex(std::string_view uri, PartitionId partition,
                                           std::span<const Offset> offsets, const TopicConfig& config);

// tokenfeed::topic::BuildKafkaTokenIndex (tokenfeed/token_index.h): creates
// the index topic when missing (the data topic's partition count and
// replication factor, no retention) and appends chunks for every
// partition's offsets from where its index ends (or the partition's start)
// to the high watermark taken at the start.
Result<std::vector<TokenIndexBuild>> BuildKafkaIndexTopic(std::string_view uri, const TopicConfig& config,
                                                          const TokenIndexBuildOptions& options);

}  // namespace tokenfeed::topic
