// Records written through Producer come back exactly through
// PartitionConsumer: chosen partitions, offsets in order, every byte, under
// each compression; watermarks and end detection; seek; a gone offset.
#include <gtest/gtest.h>

#include <map>
#include <ostream>
#include <set>

#include "kafka_test_env.h"

namespace tokenfeed::kafka {
// Names the parameter in test listings ("zstd", not "4-byte object").
void PrintTo(Compression c, std::ostream* os) { *os << CompressionName(c); }
}  // namespace tokenfeed::kafka

namespace tokenfeed::kafka::testing {
namespace {

constexpr int32_t kPartitions = 4;

std::string KeyOf(uint64_t i) {
  std::string key = std::to_string(i);
  key.insert(key.begin(), 'k');
  return key;
}

class ProduceConsumeTest : public KafkaBrokerTest, public ::testing::WithParamInterface<Compression> {};

TEST_P(ProduceConsumeTest, RecordsComeBackExactlyAtChosenPartitionsAndOffsets) {
  const std::string topic = CreateTopic(kPartitions);
  auto producer = Producer::Open(ProducerFor(topic, GetParam()));
  ASSERT_TRUE(producer.ok()) << producer.status().ToString();
  EXPECT_EQ((*producer)->partition_count(), kPartitions);

  constexpr uint64_t kRecords = 240;
  std::vector<Delivery> deliveries;
  for (uint64_t i = 0; i < kRecords; ++i) {
    // Uneven on purpose: partition 3 gets a third of everything.
    const int32_t partition = i % 3 == 0 ? 3 : static_cast<int32_t>(i % 3);
    const std::string value = RecordPayload(i, RecordSize(i));
    ASSERT_TRUE((*producer)->Produce(partition, KeyOf(i), value, /*token=*/1000 + i).ok());
    if (i % 50 == 0) {
      ASSERT_TRUE((*producer)->PollDeliveries(std::chrono::milliseconds(0), &deliveries).ok());
    }
  }
  for (auto& d : FlushAll(**producer, timeout_)) deliveries.push_back(std::move(d));
  EXPECT_EQ((*producer)->InFlight(), 0u);

  // Every token acknowledged once, at consecutive offsets per partition in
  // produce order.
  ASSERT_EQ(deliveries.size(), kRecords);
  std::map<uint64_t, Delivery> by_token;
  for (const auto& d : deliveries) {
    ASSERT_TRUE(d.status.ok()) << d.status.ToString();
    ASSERT_TRUE(by_token.emplace(d.token, d).second) << "token " << d.token << " reported twice";
  }
  std::map<int32_t, int64_t> next_offset;
  for (uint64_t i = 0; i < kRecords; ++i) {
    const Delivery& d = by_token.at(1000 + i);
    const int32_t partition = i % 3 == 0 ? 3 : static_cast<int32_t>(i % 3);
    EXPECT_EQ(d.partition, partition);
    EXPECT_EQ(d.offset, next_offset[partition]++) << "token " << d.token;
  }
  EXPECT_EQ(next_offset.count(0), 0u);

  auto consumer = PartitionConsumer::Open(ConsumerFor(topic), {{0, 0}, {1, 0}, {2, 0}, {3, 0}});
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  const auto records = ReadToEnd(**consumer, timeout_);
  ASSERT_EQ(records.size(), kRecords);
  std::map<int32_t, std::vector<const ReadRecord*>> per_partition;
  for (const auto& r : records) per_partition[r.partition].push_back(&r);
  for (uint64_t i = 0; i < kRecords; ++i) {
    const Delivery& d = by_token.at(1000 + i);
    const ReadRecord& r = *per_partition.at(d.partition).at(static_cast<size_t>(d.offset));
    EXPECT_EQ(r.offset, d.offset);
    EXPECT_EQ(r.key, KeyOf(i));
    ASSERT_EQ(r.value, RecordPayload(i, RecordSize(i))) << "record " << i;
  }
  for (int32_t p = 0; p < kPartitions; ++p) {
    auto wm = (*consumer)->QueryWatermarks(p);
    ASSERT_TRUE(wm.ok()) << wm.status().ToString();
    EXPECT_EQ(wm->low, 0);
    EXPECT_EQ(wm->high, next_offset[p]);
    EXPECT_EQ((*consumer)->Position(p), next_offset[p]);
    EXPECT_TRUE((*consumer)->AtEnd(p));
  }
}

INSTANTIATE_TEST_SUITE_P(Compressions, ProduceConsumeTest,
                         ::testing::Values(Compression::kZstd, Compression::kLz4, Compression::kNone),
                         [](const auto& param_info) { return std::string(CompressionName(param_info.param)); });

class ConsumerBrokerTest : public KafkaBrokerTest {
 protected:
  // Writes `n` records to one partition, payload RecordPayload(first + i).
  void Write(const std::string& topic, int32_t partition, uint64_t first, uint64_t n) {
    auto producer = Producer::Open(ProducerFor(topic));
    ASSERT_TRUE(producer.ok()) << producer.status().ToString();
    for (uint64_t i = first; i < first + n; ++i) {
      ASSERT_TRUE((*producer)->Produce(partition, "", RecordPayload(i, 4096), i).ok());
    }
    for (const auto& d : FlushAll(**producer, timeout_)) ASSERT_TRUE(d.status.ok()) << d.status.ToString();
  }
};

TEST_F(ConsumerBrokerTest, EndOfPartitionAndWatermarksTrackNewRecords) {
  const std::string topic = CreateTopic(2);
  Write(topic, 0, 0, 10);

  auto consumer = PartitionConsumer::Open(ConsumerFor(topic), {{0, 0}, {1, kOffsetBeginning}});
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  EXPECT_FALSE((*consumer)->AtEnd(0));
  EXPECT_EQ((*consumer)->Position(0), 0);
  EXPECT_EQ((*consumer)->Position(1), std::nullopt);  // logical start: not known yet

  auto first = ReadToEnd(**consumer, timeout_);
  ASSERT_EQ(first.size(), 10u);
  EXPECT_TRUE((*consumer)->AtEnd(0));
  EXPECT_TRUE((*consumer)->AtEnd(1));  // empty partition: at its end at once
  EXPECT_EQ((*consumer)->Position(1), 0);
  EXPECT_EQ((*consumer)->QueryWatermarks(0)->high, 10);

  // A finite topic grows: the reader leaves the end and reaches it again.
  Write(topic, 0, 10, 5);
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  std::vector<int64_t> offsets;
  while (offsets.size() < 5 && std::chrono::steady_clock::now() < deadline) {
    auto batch = (*consumer)->Poll(100, std::chrono::milliseconds(200));
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    for (const auto& r : *batch) offsets.push_back(r.offset);
  }
  EXPECT_EQ(offsets, (std::vector<int64_t>{10, 11, 12, 13, 14}));
  auto rest = ReadToEnd(**consumer, timeout_);
  EXPECT_TRUE(rest.empty());
  EXPECT_TRUE((*consumer)->AllAtEnd());
  EXPECT_EQ((*consumer)->Position(0), 15);
}

TEST_F(ConsumerBrokerTest, StartsAtExplicitOffsetAndSeeks) {
  const std::string topic = CreateTopic(1);
  Write(topic, 0, 0, 20);

  auto consumer = PartitionConsumer::Open(ConsumerFor(topic), {{0, 12}});
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  auto tail = ReadToEnd(**consumer, timeout_);
  ASSERT_EQ(tail.size(), 8u);
  for (size_t i = 0; i < tail.size(); ++i) {
    EXPECT_EQ(tail[i].offset, static_cast<int64_t>(12 + i));
    EXPECT_EQ(tail[i].value, RecordPayload(12 + i, 4096));
  }

  ASSERT_TRUE((*consumer)->Seek(0, 3).ok());
  EXPECT_FALSE((*consumer)->AtEnd(0));
  EXPECT_EQ((*consumer)->Position(0), 3);
  auto again = ReadToEnd(**consumer, timeout_);
  ASSERT_EQ(again.size(), 17u);
  EXPECT_EQ(again.front().offset, 3);
  EXPECT_EQ(again.front().value, RecordPayload(3, 4096));
  EXPECT_EQ(again.back().offset, 19);

  EXPECT_EQ((*consumer)->Seek(5, 0).code(), StatusCode::kNotFound);
  // Re-assign from scratch, then to the end: nothing to read, at the end.
  ASSERT_TRUE((*consumer)->Assign({{0, kOffsetEnd}}).ok());
  auto none = ReadToEnd(**consumer, timeout_);
  EXPECT_TRUE(none.empty());
  EXPECT_EQ((*consumer)->Position(0), 20);
}

TEST_F(ConsumerBrokerTest, OffsetPastTheLogIsOutOfRangeNotASilentJump) {
  const std::string topic = CreateTopic(1);
  Write(topic, 0, 0, 3);
  auto consumer = PartitionConsumer::Open(ConsumerFor(topic), {{0, 1000}});
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  Status error;
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  while (error.ok() && std::chrono::steady_clock::now() < deadline) {
    auto batch = (*consumer)->Poll(10, std::chrono::milliseconds(200));
    if (!batch.ok()) error = batch.status();
    if (batch.ok()) {
      ASSERT_TRUE(batch->empty()) << "records returned from an offset past the end";
    }
  }
  EXPECT_EQ(error.code(), StatusCode::kOutOfRange) << error.ToString();
  EXPECT_NE(error.message().find("partition 0"), std::string::npos) << error.ToString();
  EXPECT_NE(error.message().find("0 up to 3"), std::string::npos) << error.ToString();
}

TEST_F(ConsumerBrokerTest, UnassignedPartitionsAndBadOffsetsAreRejected) {
  const std::string topic = CreateTopic(2);
  auto bad_partition = PartitionConsumer::Open(ConsumerFor(topic), {{2, 0}});
  EXPECT_TRUE(bad_partition.status().IsNotFound()) << bad_partition.status().ToString();
  EXPECT_NE(bad_partition.status().message().find("partitions 0..1"), std::string::npos);
  auto bad_offset = PartitionConsumer::Open(ConsumerFor(topic), {{0, -7}});
  EXPECT_EQ(bad_offset.status().code(), StatusCode::kInvalidArgument);
  auto consumer = PartitionConsumer::Open(ConsumerFor(topic), {{0, 0}});
  ASSERT_TRUE(consumer.ok());
  EXPECT_EQ((*consumer)->Seek(1, 0).code(), StatusCode::kInvalidArgument);
}

TEST_F(ConsumerBrokerTest, HeadersAndZeroCopyBatchLifetime) {
  const std::string topic = CreateTopic(1);
  auto producer = Producer::Open(ProducerFor(topic));
  ASSERT_TRUE(producer.ok());
  const std::string value = RecordPayload(7, 10000);
  const std::string hv = "v1";
  const RecordHeader headers[] = {{"format", std::as_bytes(std::span(hv))}};
  ASSERT_TRUE((*producer)
                  ->Produce(0, std::as_bytes(std::span(std::string_view("key"))),
                            std::as_bytes(std::span(value)), 1, headers)
                  .ok());
  for (const auto& d : FlushAll(**producer, timeout_)) ASSERT_TRUE(d.status.ok()) << d.status.ToString();

  auto consumer = PartitionConsumer::Open(ConsumerFor(topic), {{0, 0}});
  ASSERT_TRUE(consumer.ok());
  MessageBatch kept;
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  while (kept.empty() && std::chrono::steady_clock::now() < deadline) {
    auto batch = (*consumer)->Poll(10, std::chrono::milliseconds(200));
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    kept = std::move(*batch);
  }
  ASSERT_EQ(kept.size(), 1u);
  // The views stay valid while the batch lives, across further polls.
  auto more = (*consumer)->Poll(10, std::chrono::milliseconds(100));
  ASSERT_TRUE(more.ok());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(kept[0].value.data()), kept[0].value.size()), value);
  EXPECT_EQ(kept.value_bytes(), value.size());
  auto h = kept.Header(0, "format");
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(h->data()), h->size()), "v1");
  EXPECT_FALSE(kept.Header(0, "missing").has_value());
  EXPECT_GE(kept[0].timestamp_ms, 0);
  kept.Release();
  EXPECT_TRUE(kept.empty());
}

}  // namespace
}  // namespace tokenfeed::kafka::testing
