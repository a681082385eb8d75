// AdminClient: creates, describes and deletes Kafka topics, reads partition
// watermarks and a consumer group's committed offsets. Every call is bounded
// by the client timeout. CreateTopic and DeleteTopic return only once the
// cluster's metadata shows the change (so a producer opened next finds the
// topic), or TimedOut. Not thread-safe: use one AdminClient per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kafka/client_options.h"
#include "kafka/partition_offset.h"
#include "tokenfeed/status.h"

namespace tokenfeed::kafka {

struct TopicSpec {
  std::string name;
  int32_t partitions = 1;
  int16_t replication_factor = -1;  // -1: the brokers' default.replication.factor
  // Topic-level configs, e.g. {"max.message.bytes", "8388608"}, {"min.insync.replicas", "2"}.
  std::vector<std::pair<std::string, std::string>> configs;
};

struct PartitionInfo {
  int32_t id = 0;
  int32_t leader = -1;  // broker id; -1 while no leader is elected
  std::vector<int32_t> replicas;
  std::vector<int32_t> isr;
};

struct TopicInfo {
  std::string name;
  std::vector<PartitionInfo> partitions;  // ordered by id
};

enum class MissingTopic { kCreate, kError };

class AdminClient {
 public:
  static Result<std::unique_ptr<AdminClient>> Open(const ClientOptions& options);
  ~AdminClient();
  AdminClient(const AdminClient&) = delete;
  AdminClient& operator=(const AdminClient&) = delete;

  // AlreadyExists when the topic exists (whatever its shape).
  Status CreateTopic(const TopicSpec& spec);
  // Describes `spec.name`; when it does not exist, creates it from `spec`
  // (kCreate) or returns NotFound (kError). An existing topic with fewer
  // partitions than asked for is an InvalidArgument error.
  Result<TopicInfo> EnsureTopic(const TopicSpec& spec, MissingTopic missing);
  Result<TopicInfo> DescribeTopic(const std::string& topic);
  Status DeleteTopic(const std::string& topic);
  // Asks each partition's leader; ordered by partition.
  Result<std::vector<Watermarks>> QueryWatermarks(const std::string& topic);
  Result<Watermarks> QueryWatermarks(const std::string& topic, int32_t partition);
  Result<std::vector<std::pair<std::string, std::string>>> DescribeTopicConfigs(const std::string& topic);
  // The offsets the group has committed (only partitions with a commit).
  Result<std::vector<TopicPartitionOffset>> ListGroupOffsets(const std::string& group);

  const std::string& bootstrap() const;

 private:
  struct Impl;
  explicit AdminClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tokenfeed::kafka
