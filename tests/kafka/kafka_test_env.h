// Shared by the real-broker tests: finds the broker the CTest fixture started
// (DIR/bootstrap, DIR from TOKENFEED_KAFKA_DIR), makes unique topic names,
// deterministic record payloads, and produce/read-back helpers. A test whose
// broker is missing fails when TOKENFEED_REQUIRE_REFERENCE=1, else skips.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kafka/admin_client.h"
#include "kafka/partition_consumer.h"
#include "kafka/producer.h"

namespace tokenfeed::kafka::testing {

class KafkaBrokerTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // A name unique per test and run, not created; deleted in TearDown if it
  // exists by then (for code under test that creates its own topic).
  std::string NewTopicName();
  // Unique per test and run; the topic is deleted in TearDown.
  std::string CreateTopic(int32_t partitions, std::vector<std::pair<std::string, std::string>> configs = {},
                          int16_t replication_factor = -1);
  ProducerOptions ProducerFor(const std::string& topic, Compression c = Compression::kLz4) const;
  PartitionConsumerOptions ConsumerFor(const std::string& topic) const;
  AdminClient& admin() { return *admin_; }

  std::string bootstrap_;
  std::string state_dir_;
  std::chrono::milliseconds timeout_{20000};

 private:
  std::unique_ptr<AdminClient> admin_;
  std::vector<std::string> topics_;
};

// A payload of `size` bytes that depends on `seed` (so a mixed-up record is seen).
std::string RecordPayload(uint64_t seed, size_t size);
// Sizes spread over 4..64 KB, deterministic in i.
size_t RecordSize(uint64_t i);

// Produces, then flushes; returns every Delivery (any order).
std::vector<Delivery> FlushAll(Producer& p, std::chrono::milliseconds timeout);

struct ReadRecord {
  int32_t partition;
  int64_t offset;
  std::string key;
  std::string value;
};
// Reads until every assigned partition is at its end (bounded by `timeout`).
std::vector<ReadRecord> ReadToEnd(PartitionConsumer& c, std::chrono::milliseconds timeout);

// Runs scripts/kafka-local with the test's state directory; returns its exit status.
int KafkaLocal(const std::string& state_dir, const std::string& args);

}  // namespace tokenfeed::kafka::testing
