// topic.h over Kafka against the real broker: the writer creates or refuses
// topics, writes each partition in Append order and is a no-op for nothing;
// the cursor reads any offset range zero-copy, at most a given count per Read, skips transaction markers, and
// reports the stored range, stops fetching at a read end and reads on after
// seeks and new ends; the writer's last record looks past markers; a
// topic limit below the default batch size is respected, a record above it
// is a clear error that stops the writer; reserved records are written on
// Commit, an abandoned open batch never.
#include <gtest/gtest.h>

#include <set>

#include "kafka_test_env.h"
#include "tokenfeed/topic.h"

namespace tokenfeed::kafka::testing {
namespace {

using std::chrono::milliseconds;
using topic::PartitionCursor;
using topic::TopicWriter;
using topic::WriterConfig;

class TopicOnKafkaTest : public KafkaBrokerTest {
 protected:
  std::string Uri(const std::string& topic) const { return "kafka://" + bootstrap_ + "/" + topic; }

  WriterConfig Config(uint32_t partitions) const {
    WriterConfig c;
    c.partitions = partitions;
    c.kafka_timeout = timeout_;
    return c;
  }

  static std::vector<std::string> Records(uint32_t partition, size_t n, size_t size = 2000) {
    std::vector<std::string> out;
    for (size_t i = 0; i < n; ++i) out.push_back(RecordPayload(partition * 100000 + i, size + i % 97));
    return out;
  }

  static Status Append(TopicWriter& w, uint32_t partition, const std::vector<std::string>& records) {
    std::vector<std::span<const uint8_t>> spans;
    for (const auto& r : records) spans.emplace_back(reinterpret_cast<const uint8_t*>(r.data()), r.size());
    return w.Append(PartitionId(partition), spans);
  }

  // Writes `records` to partition 0 of the one-partition topic `name`.
  void WritePartitionZero(const std::string& name, const std::vector<std::string>& records) {
    auto w = topic::OpenTopicWriter(Uri(name), Config(1));
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    ASSERT_TRUE(Append(**w, 0, records).ok());
    ASSERT_TRUE((*w)->Close().ok());
  }

  // Every record from the cursor's position to the partition's end.
  static std::vector<std::pair<uint64_t, std::string>> ReadAll(PartitionCursor& c) {
    std::vector<std::pair<uint64_t, std::string>> out;
    auto end = c.EndOffset();
    EXPECT_TRUE(end.ok()) << end.status().ToString();
    for (int rounds = 0; end.ok() && c.position() < *end && rounds < 2000; ++rounds) {
      auto batch = c.Read(milliseconds(200));
      EXPECT_TRUE(batch.ok()) << batch.status().ToString();
      if (!batch.ok()) break;
      for (const auto& r : *batch) out.emplace_back(r.offset.value(), std::string(r.bytes.begin(), r.bytes.end()));
    }
    EXPECT_TRUE(end.ok() && c.position() >= *end) << "did not reach the end";
    return out;
  }
};

TEST_F(TopicOnKafkaTest, WriterCreatesTheTopicAndCursorsReadEveryPartitionBack) {
  const std::string name = NewTopicName();
  auto w = topic::OpenTopicWriter(Uri(name), Config(3));
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ((*w)->partition_count(), 3u);
  for (uint32_t p = 0; p < 3; ++p) {
    auto last = (*w)->LastRecord(PartitionId(p));
    ASSERT_TRUE(last.ok()) << last.status().ToString();
    EXPECT_FALSE(last->has_value());
  }
  std::vector<std::vector<std::string>> want;
  for (uint32_t p = 0; p < 3; ++p) {
    want.push_back(Records(p, 200 + 50 * p));
    // In two Appends, so that order across calls is checked too.
    const auto& r = want.back();
    ASSERT_TRUE(Append(**w, p, {r.begin(), r.begin() + 77}).ok());
    ASSERT_TRUE(Append(**w, p, {r.begin() + 77, r.end()}).ok());
  }
  ASSERT_TRUE((*w)->Append(PartitionId(0), {}).ok());
  ASSERT_TRUE((*w)->Flush().ok());
  for (uint32_t p = 0; p < 3; ++p) {
    auto end = (*w)->EndOffset(PartitionId(p));
    ASSERT_TRUE(end.ok()) << end.status().ToString();
    EXPECT_EQ(end->value(), want[p].size());
    auto last = (*w)->LastRecord(PartitionId(p));
    ASSERT_TRUE(last.ok() && last->has_value()) << last.status().ToString();
    EXPECT_EQ(**last, want[p].back());
  }
  EXPECT_FALSE((*w)->Append(PartitionId(3), {}).ok());
  ASSERT_TRUE((*w)->Close().ok());

  auto summary = topic::DescribeTopic(Uri(name), Config(0));
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  ASSERT_EQ(summary->partitions.size(), 3u);
  for (uint32_t p = 0; p < 3; ++p) {
    EXPECT_EQ(summary->partitions[p].records(), want[p].size());
    auto c = topic::OpenPartitionCursor(Uri(name), PartitionId(p), Config(0));
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ((*c)->partition(), PartitionId(p));
    EXPECT_EQ((*c)->StartOffset()->value(), 0u);
    const auto got = ReadAll(**c);
    ASSERT_EQ(got.size(), want[p].size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].first, i);
      ASSERT_EQ(got[i].second, want[p][i]) << "partition " << p << " offset " << i;
    }
  }
}

TEST_F(TopicOnKafkaTest, CursorSeeksAndRefusesOffsetsOutsideTheStoredRange) {
  const std::string name = CreateTopic(1);
  const auto want = Records(0, 100);
  ASSERT_NO_FATAL_FAILURE(WritePartitionZero(name, want));

  auto c = topic::OpenPartitionCursor(Uri(name), PartitionId(0), Config(0));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_TRUE((*c)->Seek(Offset(60)).ok());
  EXPECT_EQ((*c)->position(), Offset(60));
  auto batch = (*c)->Read(milliseconds(5000));
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  ASSERT_FALSE(batch->empty());
  EXPECT_EQ((*batch)[0].offset, Offset(60));
  EXPECT_EQ(std::string((*batch)[0].bytes.begin(), (*batch)[0].bytes.end()), want[60]);
  EXPECT_EQ((*c)->position(), (*batch)[batch->size() - 1].offset + 1);

  // Back again: the records come once more, from the new position.
  ASSERT_TRUE((*c)->Seek(Offset(10)).ok());
  const auto rest = ReadAll(**c);
  ASSERT_EQ(rest.size(), 90u);
  EXPECT_EQ(rest.front().first, 10u);
  EXPECT_EQ(rest.back().second, want[99]);

  // A limited Read takes no more than asked; the next one goes on from there.
  ASSERT_TRUE((*c)->Seek(Offset(20)).ok());
  uint64_t next = 20;
  for (int rounds = 0; next < 40 && rounds < 100; ++rounds) {
    auto some = (*c)->Read(milliseconds(5000), 3);
    ASSERT_TRUE(some.ok()) << some.status().ToString();
    ASSERT_FALSE(some->empty());
    ASSERT_LE(some->size(), 3u);
    for (const auto& r : *some) {
      ASSERT_EQ(r.offset.value(), next);
      EXPECT_EQ(std::string(r.bytes.begin(), r.bytes.end()), want[next]);
      ++next;
    }
    EXPECT_EQ((*c)->position(), Offset(next));
  }
  EXPECT_GE(next, 40u);

  ASSERT_TRUE((*c)->Seek(Offset(100)).ok());  // the end itself is a valid position
  Status past = (*c)->Seek(Offset(101));
  EXPECT_EQ(past.code(), StatusCode::kOutOfRange) << past.ToString();
  EXPECT_NE(past.message().find("0..100"), std::string::npos) << past.ToString();

  auto none = topic::OpenPartitionCursor(Uri(name), PartitionId(1), Config(0));
  EXPECT_EQ(none.status().code(), StatusCode::kOutOfRange) << none.status().ToString();
}

// The loader's way of reading: a block, a read end there, a seek elsewhere.
// The cursor pauses its partition at the end; every seek, a read end that
// moves further without a seek, and a read past the end must still give the
// right records at once (a resume alone would leave librdkafka's fetcher
// asleep for a second, so 24 blocks would take half a minute).
TEST_F(TopicOnKafkaTest, CursorStopsAtTheReadEndAndReadsOnAfterSeeksAndNewEnds) {
  const std::string name = CreateTopic(1);
  const auto want = Records(0, 3000);
  ASSERT_NO_FATAL_FAILURE(WritePartitionZero(name, want));
  auto opened = topic::OpenPartitionCursor(Uri(name), PartitionId(0), Config(0));
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  PartitionCursor& c = **opened;

  // Reads records [from, to) with Reads of at most what is left, as the loader does.
  auto read_range = [&](uint64_t from, uint64_t to) {
    ASSERT_EQ(c.position(), Offset(from));
    for (uint64_t next = from; next < to;) {
      auto some = c.Read(milliseconds(5000), to - next);
      ASSERT_TRUE(some.ok()) << some.status().ToString();
      ASSERT_FALSE(some->empty()) << "no record at offset " << next;
      for (const auto& r : *some) {
        ASSERT_EQ(r.offset.value(), next);
        ASSERT_EQ(std::string(r.bytes.begin(), r.bytes.end()), want[next]) << "offset " << next;
        ++next;
      }
    }
    EXPECT_EQ(c.position(), Offset(to));
  };

  const auto started = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < 24; ++i) {
    const uint64_t from = (i * 7 % 24) * 120 + i % 5;  // out of order, inside and across producer batches
    ASSERT_TRUE(c.Seek(Offset(from)).ok());
    ASSERT_TRUE(c.SetReadEnd(Offset(from + 100)).ok());
    read_range(from, from + 100);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));

  // Paused at 600; a new end without a seek, then reading past the end.
  ASSERT_TRUE(c.Seek(Offset(500)).ok());
  ASSERT_TRUE(c.SetReadEnd(Offset(600)).ok());
  read_range(500, 600);
  ASSERT_TRUE(c.SetReadEnd(Offset(700)).ok());
  read_range(600, 700);
  read_range(700, 900);
  // A seek to where the paused cursor already is.
  ASSERT_TRUE(c.SetReadEnd(Offset(1000)).ok());
  read_range(900, 1000);
  ASSERT_TRUE(c.Seek(Offset(1000)).ok());
  read_range(1000, 1010);
  // Back to the start, and to the end of the partition as the read end.
  ASSERT_TRUE(c.Seek(Offset(0)).ok());
  ASSERT_TRUE(c.SetReadEnd(Offset(5)).ok());
  read_range(0, 5);
  ASSERT_TRUE(c.Seek(Offset(2900)).ok());
  ASSERT_TRUE(c.SetReadEnd(Offset(3000)).ok());
  read_range(2900, 3000);
}

TEST_F(TopicOnKafkaTest, LastRecordAndCursorsSeePastTransactionMarkers) {
  const std::string name = CreateTopic(1);
  ProducerOptions po = ProducerFor(name);
  po.transactional_id = "tf-test-markers-" + name;
  auto producer = Producer::Open(po);
  ASSERT_TRUE(producer.ok()) << producer.status().ToString();
  ASSERT_TRUE((*producer)->InitTransactions().ok());
  for (int t = 0; t < 3; ++t) {
    ASSERT_TRUE((*producer)->BeginTransaction().ok());
    ASSERT_TRUE((*producer)->Produce(0, "", "record-" + std::to_string(t), t).ok());
    ASSERT_TRUE((*producer)->CommitTransaction().ok());
  }
  // Three records, each followed by its commit marker: offsets 0, 2, 4; end 6.
  auto w = topic::OpenTopicWriter(Uri(name), Config(1));
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ((*w)->EndOffset(PartitionId(0))->value(), 6u);
  auto last = (*w)->LastRecord(PartitionId(0));
  ASSERT_TRUE(last.ok() && last->has_value()) << last.status().ToString();
  EXPECT_EQ(**last, "record-2");

  auto c = topic::OpenPartitionCursor(Uri(name), PartitionId(0), Config(0));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const auto got = ReadAll(**c);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[2].first, 4u);
  EXPECT_EQ((*c)->position(), Offset(6));
}

TEST_F(TopicOnKafkaTest, ExistingTopicKeepsItsShapeAndMissingOnesNeedPermission) {
  const std::string name = CreateTopic(2);
  auto other = topic::OpenTopicWriter(Uri(name), Config(3));
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(other.status().message().find("has 2 partitions"), std::string::npos) << other.status().ToString();

  WriterConfig no_create = Config(1);
  no_create.create_if_missing = false;
  const std::string missing = NewTopicName();
  auto refused = topic::OpenTopicWriter(Uri(missing), no_create);
  EXPECT_TRUE(refused.status().IsNotFound()) << refused.status().ToString();
  EXPECT_TRUE(topic::DescribeTopic(Uri(missing), Config(0)).status().IsNotFound());

  WriterConfig bad = Config(2);
  bad.kafka_properties = {"message.timeout.ms=5000"};
  auto refused_property = topic::OpenTopicWriter(Uri(name), bad);
  EXPECT_EQ(refused_property.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused_property.status().message().find("gap"), std::string::npos)
      << refused_property.status().ToString();
}

TEST_F(TopicOnKafkaTest, SmallTopicLimitShrinksBatchesAndAnOversizedRecordStopsTheWriter) {
  const std::string name = CreateTopic(1, {{"max.message.bytes", "20000"}});
  auto w = topic::OpenTopicWriter(Uri(name), Config(1));
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  // Each fits alone; a default 1 MB batch of them would not.
  const auto fitting = Records(0, 60, 15000);
  ASSERT_TRUE(Append(**w, 0, fitting).ok());
  ASSERT_TRUE((*w)->Flush().ok());
  EXPECT_EQ((*w)->EndOffset(PartitionId(0))->value(), fitting.size());

  Status big = Append(**w, 0, {std::string(30000, 'x')});
  EXPECT_EQ(big.code(), StatusCode::kResourceExhausted) << big.ToString();
  EXPECT_NE(big.message().find("30000 bytes"), std::string::npos) << big.ToString();
  EXPECT_NE(big.message().find("max.message.bytes = 20000"), std::string::npos) << big.ToString();
  // Nothing more is written after a failure: the partition stays a prefix.
  EXPECT_EQ(Append(**w, 0, Records(0, 1)).code(), StatusCode::kResourceExhausted);
  EXPECT_FALSE((*w)->Close().ok());
  auto summary = topic::DescribeTopic(Uri(name), Config(0));
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->partitions[0].records(), fitting.size());
}

TEST_F(TopicOnKafkaTest, ReservedRecordsAreWrittenOnCommitAndAnAbandonedBatchNever) {
  const std::string name = CreateTopic(2);
  auto w = topic::OpenTopicWriter(Uri(name), Config(2));
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto put = [&](uint32_t partition, const std::string& record) {
    auto dest = (*w)->Reserve(PartitionId(partition), record.size());
    ASSERT_TRUE(dest.ok()) << dest.status().ToString();
    ASSERT_EQ(dest->size(), record.size());
    std::copy(record.begin(), record.end(), dest->begin());
  };
  put(0, "kept 0");
  put(1, "p1 kept 0");
  put(0, "");
  ASSERT_TRUE((*w)->Commit(PartitionId(0)).ok());
  put(0, "abandoned");
  ASSERT_TRUE((*w)->Abandon(PartitionId(0)).ok());
  put(0, "kept 2");
  ASSERT_TRUE((*w)->Commit(PartitionId(0)).ok());
  ASSERT_TRUE((*w)->Commit(PartitionId(1)).ok());
  put(1, "left open at Close");
  EXPECT_EQ((*w)->Reserve(PartitionId(2), 1).status().code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE((*w)->Close().ok());

  const std::vector<std::vector<std::string>> want = {{"kept 0", "", "kept 2"}, {"p1 kept 0"}};
  for (uint32_t p = 0; p < 2; ++p) {
    auto c = topic::OpenPartitionCursor(Uri(name), PartitionId(p), Config(0));
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    std::vector<std::string> got;
    for (const auto& [offset, bytes] : ReadAll(**c)) got.push_back(bytes);
    EXPECT_EQ(got, want[p]) << "partition " << p;
  }
}

TEST_F(TopicOnKafkaTest, UnreachableBrokerFailsWithinTheTimeoutNamingIt) {
  WriterConfig c = Config(1);
  c.kafka_timeout = milliseconds(2000);
  const auto started = std::chrono::steady_clock::now();
  auto w = topic::OpenTopicWriter("kafka://127.0.0.1:1/t", c);
  const auto took = std::chrono::steady_clock::now() - started;
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("127.0.0.1:1"), std::string::npos) << w.status().ToString();
  EXPECT_LT(took, milliseconds(8000));
}

}  // namespace
}  // namespace tokenfeed::kafka::testing
