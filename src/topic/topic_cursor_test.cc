// PartitionCursor over the embedded log: Read hands out at most the count
// asked for, the position moves past exactly those, and the next Read goes
// on from there (the rest of a batch is not lost or skipped); Seek drops
// what was left of a batch.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "base/scoped_temp_dir.h"
#include "tokenfeed/topic.h"

namespace tokenfeed::topic {
namespace {

using std::chrono::milliseconds;

class LogCursorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    uri_ = "log:" + dir_.path() + "/topics/t";
    WriterConfig config;
    config.partitions = 1;
    auto w = OpenTopicWriter(uri_, config, {PartitionId(0)});
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    // Two appends: two batches of 60 and 40 records.
    for (auto [from, to] : {std::pair{0, 60}, std::pair{60, 100}}) {
      std::vector<std::string> records;
      for (int i = from; i < to; ++i) records.push_back("record " + std::to_string(i));
      std::vector<std::span<const uint8_t>> spans;
      for (const auto& r : records) spans.emplace_back(reinterpret_cast<const uint8_t*>(r.data()), r.size());
      ASSERT_TRUE((*w)->Append(PartitionId(0), spans).ok());
    }
    ASSERT_TRUE((*w)->Close().ok());
  }

  static std::string Text(const StoredRecordView& r) { return std::string(r.bytes.begin(), r.bytes.end()); }

  ScopedTempDir dir_;
  std::string uri_;
};

TEST_F(LogCursorTest, ReadTakesAtMostTheCountAndContinuesWhereItStopped) {
  auto c = OpenPartitionCursor(uri_, PartitionId(0));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  uint64_t next = 0;
  for (int rounds = 0; next < 100 && rounds < 100; ++rounds) {
    auto batch = (*c)->Read(milliseconds(100), 7);
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    ASSERT_FALSE(batch->empty());
    ASSERT_LE(batch->size(), 7u);
    for (const StoredRecordView& r : *batch) {
      ASSERT_EQ(r.offset.value(), next);
      EXPECT_EQ(Text(r), "record " + std::to_string(next));
      ++next;
    }
    EXPECT_EQ((*c)->position(), Offset(next));
  }
  EXPECT_EQ(next, 100u);
  auto none = (*c)->Read(milliseconds(10), 7);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE(none->empty());
}

TEST_F(LogCursorTest, SeekDropsTheRestOfABatch) {
  auto c = OpenPartitionCursor(uri_, PartitionId(0));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto first = (*c)->Read(milliseconds(100), 5);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(first->size(), 5u);
  EXPECT_EQ((*c)->position(), Offset(5));
  ASSERT_TRUE((*c)->Seek(Offset(70)).ok());
  EXPECT_EQ((*c)->position(), Offset(70));
  auto after = (*c)->Read(milliseconds(100), 1000);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  ASSERT_FALSE(after->empty());
  EXPECT_EQ((*after)[0].offset, Offset(70));
  EXPECT_EQ(Text((*after)[0]), "record 70");
  // Without a limit a Read still gives the rest of a batch at most.
  auto whole = OpenPartitionCursor(uri_, PartitionId(0));
  ASSERT_TRUE(whole.ok());
  auto all = (*whole)->Read(milliseconds(100));
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 60u);
}

TEST_F(LogCursorTest, ReadStopsBeforeTheBoundAcrossBatches) {
  auto c = OpenPartitionCursor(uri_, PartitionId(0));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_TRUE((*c)->Seek(Offset(50)).ok());
  std::vector<uint64_t> got;
  for (int rounds = 0; (*c)->position() < Offset(65) && rounds < 10; ++rounds) {
    auto batch = (*c)->Read(milliseconds(100), 1000, Offset(65));  // 50..59 of one batch, 60..64 of the next
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    for (const StoredRecordView& r : *batch) got.push_back(r.offset.value());
  }
  std::vector<uint64_t> want;
  for (uint64_t o = 50; o < 65; ++o) want.push_back(o);
  EXPECT_EQ(got, want);
  EXPECT_EQ((*c)->position(), Offset(65));
  // At the bound: nothing, at once; past it the reading goes on from there.
  auto none = (*c)->Read(milliseconds(5000), 1000, Offset(65));
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  auto next = (*c)->Read(milliseconds(100), 1);
  ASSERT_TRUE(next.ok());
  ASSERT_EQ(next->size(), 1u);
  EXPECT_EQ((*next)[0].offset, Offset(65));
}

// Records read in place from a sealed (mapped) segment come with an owner
// that keeps their bytes readable after the cursor is gone; those of the
// active segment have none (valid until the next call only).
TEST(LogCursorOwnerTest, SealedRecordsOutliveTheCursorWhileTheirOwnerIsHeld) {
  ScopedTempDir dir;
  const std::string uri = "log:" + dir.path() + "/topics/t";
  WriterConfig config;
  config.partitions = 1;
  config.log_topic.segment_bytes = 4096;
  auto w = OpenTopicWriter(uri, config, {PartitionId(0)});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  for (int from = 0; from < 400; from += 50) {  // batches of ~1.3 KB: several segments
    std::vector<std::string> records;
    for (int i = from; i < from + 50; ++i) records.push_back("record " + std::to_string(i));
    std::vector<std::span<const uint8_t>> spans;
    for (const auto& r : records) spans.emplace_back(reinterpret_cast<const uint8_t*>(r.data()), r.size());
    ASSERT_TRUE((*w)->Append(PartitionId(0), spans).ok());
  }
  ASSERT_TRUE((*w)->Close().ok());
  auto c = OpenPartitionCursor(uri, PartitionId(0));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto first = (*c)->Read(milliseconds(100), 10);
  ASSERT_TRUE(first.ok() && first->size() == 10u);
  std::shared_ptr<const void> owner = (*c)->RecordsOwner();
  ASSERT_NE(owner, nullptr);
  std::vector<StoredRecordView> kept(first->begin(), first->end());
  ASSERT_TRUE((*c)->Seek(Offset(399)).ok());
  auto last = (*c)->Read(milliseconds(100), 10);
  ASSERT_TRUE(last.ok() && last->size() == 1u);
  EXPECT_EQ((*c)->RecordsOwner(), nullptr) << "the active segment's records live in the reader's buffer";
  c->reset();
  for (size_t i = 0; i < kept.size(); ++i) {
    EXPECT_EQ(std::string(kept[i].bytes.begin(), kept[i].bytes.end()), "record " + std::to_string(i));
  }
}

TEST(TransportHints, AskedOfTheUriNotItsScheme) {
  auto log = HintsFor("log:/data/topics/t");
  ASSERT_TRUE(log.ok());
  EXPECT_EQ(log->block_records, 1024u);
  EXPECT_TRUE(log->cheap_snapshot_check);
  auto kafka = HintsFor("kafka://127.0.0.1:9092/t");
  ASSERT_TRUE(kafka.ok());
  EXPECT_EQ(kafka->block_records, 4096u);
  EXPECT_FALSE(kafka->cheap_snapshot_check);
  Status bad = HintsFor("s3://bucket/t").status();
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("log:DIR/TOPIC"), std::string::npos) << bad.ToString();
}

TEST_F(LogCursorTest, BlockReadsSeeTheSameRecordsAsSequentialOnes) {
  for (ReadPattern pattern : {ReadPattern::kSequential, ReadPattern::kBlocks}) {
    TopicConfig config;
    config.read_pattern = pattern;
    auto c = OpenPartitionCursor(uri_, PartitionId(0), config);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    ASSERT_TRUE((*c)->Seek(Offset(55)).ok());
    std::vector<std::string> got;
    while (got.size() < 45) {
      auto r = (*c)->Read(milliseconds(100));
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      ASSERT_FALSE(r->empty());
      for (const StoredRecordView& v : *r) got.push_back(Text(v));
    }
    ASSERT_EQ(got.size(), 45u);
    EXPECT_EQ(got.front(), "record 55");
    EXPECT_EQ(got.back(), "record 99");
  }
}

}  // namespace
}  // namespace tokenfeed::topic
