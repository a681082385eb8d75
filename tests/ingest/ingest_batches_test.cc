// The ingest's batches in the embedded log: a partition's records are
// committed as soon as they reach --batch-bytes (counted as record bytes,
// without the log's framing), so every stored batch but a partition's last
// is the shortest run of records that reaches it, and the last is below it.
// This is what makes a resumed or repeated ingest store the same batches.
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/scoped_temp_dir.h"
#include "log/log.h"
#include "tokenfeed/ingest.h"
#include "tokenizer/test_tokenizers.h"

namespace tokenfeed::ingest {
namespace {

TEST(IngestBatchesTest, EachBatchIsTheShortestRunOfRecordsThatReachesBatchBytes) {
  const std::string tokenizer = tokenizer::TestTokenizerPath("deepseek_v3");
  if (!std::ifstream(tokenizer)) {
    if (tokenizer::ReferenceRequired()) FAIL() << tokenizer << " is missing";
    GTEST_SKIP() << tokenizer << " is missing (run scripts/setup.sh)";
  }
  ScopedTempDir dir;
  {
    std::ofstream out(dir.Join("in.txt"));
    std::mt19937 rng(7);
    const char* words[] = {"alpha", "beta", "数据", "テキスト", "données", "1234", "x+y"};
    for (int i = 0; i < 3000; ++i) {
      // Mostly short documents, a few long ones that fill a batch alone.
      const int n = i % 97 == 0 ? 3000 : 1 + static_cast<int>(rng() % 40);
      for (int w = 0; w < n; ++w) out << words[rng() % 7] << ' ';
      out << i << '\n';
    }
  }
  IngestOptions o;
  o.tokenizer_path = tokenizer;
  o.inputs = {dir.Join("in.txt")};
  o.to_uri = "log:" + dir.Join("t");
  o.writer.partitions = 3;
  o.batch_bytes = 4 << 10;
  o.progress = ProgressMode::kNever;
  o.threads = 2;
  auto stats = RunIngest(o);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  ASSERT_EQ(stats->documents_written, 3000u);

  auto topic = log::TopicDirectory::Open(o.to_uri);
  ASSERT_TRUE(topic.ok()) << topic.status().ToString();
  uint64_t records = 0, record_bytes = 0;
  for (uint32_t p = 0; p < 3; ++p) {
    auto reader = (*topic)->OpenReader(PartitionId(p));
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    std::vector<std::vector<uint64_t>> batches;  // record sizes, batch by batch
    for (;;) {
      auto batch = (*reader)->Read(std::chrono::milliseconds(0));
      ASSERT_TRUE(batch.ok()) << batch.status().ToString();
      if (batch->empty()) break;
      auto& sizes = batches.emplace_back();
      for (const log::LogRecord& r : *batch) sizes.push_back(r.bytes.size());
    }
    ASSERT_GT(batches.size(), 2u) << "partition " << p;
    for (size_t b = 0; b < batches.size(); ++b) {
      uint64_t sum = 0;
      for (uint64_t s : batches[b]) sum += s;
      records += batches[b].size();
      record_bytes += sum;
      if (b + 1 < batches.size()) {
        EXPECT_GE(sum, o.batch_bytes) << "partition " << p << " batch " << b;
        EXPECT_LT(sum - batches[b].back(), o.batch_bytes) << "partition " << p << " batch " << b;
      } else {
        EXPECT_LT(sum, o.batch_bytes) << "partition " << p << ": the last batch";
      }
    }
  }
  EXPECT_EQ(records, 3000u);
  EXPECT_EQ(record_bytes, stats->record_bytes);
}

}  // namespace
}  // namespace tokenfeed::ingest
