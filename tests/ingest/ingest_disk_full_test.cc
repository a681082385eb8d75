// A full disk in the middle of an ingest: the run stops with a clear error,
// the topic stays consistent, and the same run started again (after space is
// freed) ends with exactly the records of an uninterrupted run.
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/fault_injection_file_system.h"
#include "base/scoped_temp_dir.h"
#include "tokenfeed/ingest.h"
#include "tokenfeed/topic.h"
#include "tokenizer/test_tokenizers.h"

namespace tokenfeed::ingest {
namespace {

std::vector<std::string> AllRecords(const std::string& uri) {
  std::vector<std::string> out;
  auto summary = topic::DescribeTopic(uri);
  EXPECT_TRUE(summary.ok()) << summary.status().ToString();
  if (!summary.ok()) return out;
  for (const auto& p : summary->partitions) {
    auto cursor = topic::OpenPartitionCursor(uri, p.partition);
    EXPECT_TRUE(cursor.ok());
    while ((*cursor)->position() < p.end_offset) {
      auto batch = (*cursor)->Read(std::chrono::milliseconds(1000));
      EXPECT_TRUE(batch.ok());
      if (!batch.ok() || batch->empty()) break;
      for (const auto& r : *batch) {
        out.push_back(std::to_string(p.partition.value()) + ":" +
                      std::string(reinterpret_cast<const char*>(r.bytes.data()), r.bytes.size()));
      }
    }
  }
  return out;
}

IngestOptions Options(const ScopedTempDir& dir, const std::string& tokenizer, const std::string& topic) {
  IngestOptions o;
  o.tokenizer_path = tokenizer;
  o.inputs = {dir.Join("in")};
  o.to_uri = "log:" + dir.Join(topic);
  o.writer.partitions = 3;
  o.batch_bytes = 8 << 10;
  o.progress = ProgressMode::kNever;
  o.threads = 2;
  return o;
}

TEST(IngestDiskFullTest, StopsCleanlyAndResumesToTheSameRecords) {
  const std::string tokenizer = tokenizer::TestTokenizerPath("deepseek_v3");
  if (!std::ifstream(tokenizer)) {
    if (tokenizer::ReferenceRequired()) FAIL() << tokenizer << " is missing";
    GTEST_SKIP() << tokenizer << " is missing (run scripts/setup.sh)";
  }
  ScopedTempDir dir;
  ASSERT_TRUE(FileSystem::Posix()->CreateDir(dir.Join("in")).ok());
  std::mt19937 rng(4);
  const char* words[] = {"alpha", "beta", "数据", "テキスト", "données", "1234", "x+y"};
  for (int f = 0; f < 3; ++f) {
    std::ofstream out(dir.Join("in/part" + std::to_string(f) + ".txt"));
    for (int i = 0; i < 2000; ++i) {
      for (int w = 0; w < 1 + static_cast<int>(rng() % 30); ++w) out << words[rng() % 7] << ' ';
      out << f << '.' << i << '\n';
    }
  }

  auto reference = RunIngest(Options(dir, tokenizer, "ref"));
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();
  const std::vector<std::string> want = AllRecords("log:" + dir.Join("ref"));
  ASSERT_EQ(want.size(), 6000u);

  FaultInjectionFileSystem fs;
  fs.SetFreeSpace(300 << 10);  // room for a part of the records
  IngestOptions o = Options(dir, tokenizer, "t");
  o.writer.log_file_system = &fs;
  auto full = RunIngest(o);
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.status().code(), StatusCode::kResourceExhausted) << full.status().ToString();
  const std::vector<std::string> partial = AllRecords(o.to_uri);
  EXPECT_GT(partial.size(), 0u);
  EXPECT_LT(partial.size(), want.size());

  fs.SetFreeSpace(std::nullopt);  // space freed
  auto resumed = RunIngest(o);
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  EXPECT_TRUE(resumed->resumed);
  EXPECT_EQ(resumed->documents_written + resumed->documents_skipped, 6000u);
  EXPECT_EQ(AllRecords(o.to_uri), want);
}

}  // namespace
}  // namespace tokenfeed::ingest
