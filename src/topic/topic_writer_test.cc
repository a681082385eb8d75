// TopicWriter over the embedded log, written in place: records reserved,
// filled and committed come back byte for byte, one stored batch per Commit;
// nothing of an open batch is visible before its Commit, and an abandoned
// one (or one left open at Close) is never written; a size the log cannot
// store is an error that leaves the writer usable; a Commit that fails on a
// full disk keeps its batch for the next one.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/fault_injection_file_system.h"
#include "base/scoped_temp_dir.h"
#include "log/log.h"
#include "tokenfeed/topic.h"

namespace tokenfeed::topic {
namespace {

using std::chrono::milliseconds;

class LogWriterTest : public ::testing::Test {
 protected:
  std::unique_ptr<TopicWriter> Open(FileSystem* fs = nullptr) {
    WriterConfig config;
    config.partitions = 2;
    config.log_file_system = fs;
    auto w = OpenTopicWriter(uri_, config);
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    return w.ok() ? std::move(w).value() : nullptr;
  }

  static Status Put(TopicWriter& w, PartitionId p, const std::string& record) {
    TF_ASSIGN_OR_RETURN(std::span<uint8_t> dest, w.Reserve(p, record.size()));
    if (dest.size() != record.size()) return Status::Internal("Reserve returned a span of the wrong size");
    if (!record.empty()) std::memcpy(dest.data(), record.data(), record.size());
    return Status::OK();
  }

  // Every record of the partition, and how many each stored batch holds.
  void ReadBack(PartitionId p, std::vector<std::string>* records, std::vector<uint32_t>* batches) {
    auto topic = log::TopicDirectory::Open(uri_);
    ASSERT_TRUE(topic.ok()) << topic.status().ToString();
    auto reader = (*topic)->OpenReader(p);
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    for (;;) {
      auto batch = (*reader)->Read(milliseconds(0));
      ASSERT_TRUE(batch.ok()) << batch.status().ToString();
      if (batch->empty()) break;
      batches->push_back(batch->size());
      for (const log::LogRecord& r : *batch) {
        EXPECT_EQ(r.offset.value(), records->size());
        records->emplace_back(r.as_string_view());
      }
    }
  }

  ScopedTempDir dir_;
  std::string uri_ = "log:" + dir_.path() + "/topics/t";
};

TEST_F(LogWriterTest, ReservedRecordsComeBackAfterCommitOneBatchPerCommit) {
  auto w = Open();
  ASSERT_NE(w, nullptr);
  const PartitionId p0(0), p1(1);
  // Sizes around the 4-byte entry alignment, an empty record, and one past
  // the builder's first allocation (it grows under later reservations).
  const std::vector<std::string> first = {"a", "", "abc", "abcd", "abcde", std::string(100000, 'x'), "tail"};
  for (size_t i = 0; i < first.size(); ++i) {
    ASSERT_TRUE(Put(*w, p0, first[i]).ok());
    ASSERT_TRUE(Put(*w, p1, "p1 record " + std::to_string(i)).ok());  // interleaved: separate open batches
  }
  EXPECT_EQ(w->EndOffset(p0).value(), Offset(0)) << "nothing is visible before Commit";
  ASSERT_TRUE(w->Commit(p0).ok());
  EXPECT_EQ(w->EndOffset(p0).value(), Offset(first.size()));
  EXPECT_EQ(w->EndOffset(p1).value(), Offset(0)) << "a Commit writes its own partition only";
  EXPECT_EQ(w->LastRecord(p0).value(), std::optional<std::string>("tail"));
  ASSERT_TRUE(Put(*w, p0, "second batch").ok());
  ASSERT_TRUE(w->Commit(p0).ok());
  ASSERT_TRUE(w->Commit(p0).ok()) << "an empty open batch commits nothing";
  ASSERT_TRUE(w->Commit(p1).ok());
  ASSERT_TRUE(w->Close().ok());

  std::vector<std::string> records;
  std::vector<uint32_t> batches;
  ReadBack(p0, &records, &batches);
  std::vector<std::string> want = first;
  want.push_back("second batch");
  EXPECT_EQ(records, want);
  EXPECT_EQ(batches, (std::vector<uint32_t>{static_cast<uint32_t>(first.size()), 1}));
  records.clear();
  batches.clear();
  ReadBack(p1, &records, &batches);
  ASSERT_EQ(records.size(), first.size());
  EXPECT_EQ(records.back(), "p1 record " + std::to_string(first.size() - 1));
  EXPECT_EQ(batches, (std::vector<uint32_t>{static_cast<uint32_t>(first.size())}));
}

TEST_F(LogWriterTest, AnAbandonedOrUncommittedBatchIsNeverWritten) {
  const PartitionId p0(0);
  {
    auto w = Open();
    ASSERT_NE(w, nullptr);
    ASSERT_TRUE(Put(*w, p0, "kept 0").ok());
    ASSERT_TRUE(w->Commit(p0).ok());
    ASSERT_TRUE(Put(*w, p0, "abandoned 1").ok());
    ASSERT_TRUE(Put(*w, p0, "abandoned 2").ok());
    ASSERT_TRUE(w->Abandon(p0).ok());
    ASSERT_TRUE(Put(*w, p0, "kept 1").ok());
    ASSERT_TRUE(w->Commit(p0).ok());
    ASSERT_TRUE(Put(*w, p0, "left open at Close").ok());
    ASSERT_TRUE(w->Close().ok());
  }
  std::vector<std::string> records;
  std::vector<uint32_t> batches;
  ReadBack(p0, &records, &batches);
  EXPECT_EQ(records, (std::vector<std::string>{"kept 0", "kept 1"}));

  auto w = Open();  // the resumed writer starts after the committed records
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->EndOffset(p0).value(), Offset(2));
  EXPECT_EQ(w->LastRecord(p0).value(), std::optional<std::string>("kept 1"));
}

TEST_F(LogWriterTest, SizesTheLogCannotStoreAreErrorsAndTheWriterGoesOn) {
  auto w = Open();
  ASSERT_NE(w, nullptr);
  const PartitionId p0(0);
  ASSERT_TRUE(Put(*w, p0, "before").ok());
  for (size_t size : {size_t{1} << 30, (size_t{1} << 30) + 1, size_t{UINT32_MAX}, SIZE_MAX}) {
    auto r = w->Reserve(p0, size);
    ASSERT_FALSE(r.ok()) << size;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
    EXPECT_NE(r.status().message().find("partition 0"), std::string::npos) << r.status().ToString();
    EXPECT_NE(r.status().message().find("commit smaller batches"), std::string::npos) << r.status().ToString();
  }
  auto elsewhere = w->Reserve(PartitionId(7), 4);
  ASSERT_FALSE(elsewhere.ok());
  EXPECT_EQ(elsewhere.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(w->Commit(PartitionId(7)).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(w->Abandon(PartitionId(7)).code(), StatusCode::kInvalidArgument);

  // Append is all or nothing: the record that cannot be reserved takes the
  // open batch with it (the bytes of the oversized span are never read).
  const std::string small = "small";
  static const uint8_t kNoBytes[1] = {0};
  std::vector<std::span<const uint8_t>> spans = {
      {reinterpret_cast<const uint8_t*>(small.data()), small.size()},
      {kNoBytes, size_t{1} << 31}};
  EXPECT_EQ(w->Append(p0, spans).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(w->EndOffset(p0).value(), Offset(0));
  auto alone = w->Reserve(p0, SIZE_MAX);  // into the empty open batch the failed Append left
  ASSERT_FALSE(alone.ok());
  EXPECT_NE(alone.status().message().find("store smaller records"), std::string::npos) << alone.status().ToString();

  ASSERT_TRUE(Put(*w, p0, "after").ok());
  ASSERT_TRUE(w->Commit(p0).ok());
  ASSERT_TRUE(w->Close().ok());
  std::vector<std::string> records;
  std::vector<uint32_t> batches;
  ReadBack(p0, &records, &batches);
  EXPECT_EQ(records, (std::vector<std::string>{"after"}));
}

TEST_F(LogWriterTest, ACommitThatFailsOnAFullDiskKeepsItsBatch) {
  FaultInjectionFileSystem fs;
  auto w = Open(&fs);
  ASSERT_NE(w, nullptr);
  const PartitionId p0(0);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(Put(*w, p0, "record " + std::to_string(i)).ok());
  fs.SetFreeSpace(64);
  Status full = w->Commit(p0);
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.code(), StatusCode::kResourceExhausted) << full.ToString();
  EXPECT_EQ(w->EndOffset(p0).value(), Offset(0));
  fs.SetFreeSpace(std::nullopt);
  ASSERT_TRUE(w->Commit(p0).ok());
  ASSERT_TRUE(w->Close().ok());
  std::vector<std::string> records;
  std::vector<uint32_t> batches;
  ReadBack(p0, &records, &batches);
  ASSERT_EQ(records.size(), 100u);
  EXPECT_EQ(records[99], "record 99");
  EXPECT_EQ(batches, (std::vector<uint32_t>{100}));
}

}  // namespace
}  // namespace tokenfeed::topic
