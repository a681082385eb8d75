// The whole ingest on three brokers: replication factor 3, the cluster's
// min.insync.replicas=2, and the leader of partition 0 killed (SIGKILL) while
// records are being produced. The run completes, and every partition holds
// exactly the records that the same ingest writes to the embedded log: every
// document once, nothing lost to the leader change, nothing doubled by the
// producer's retries.
#include <gtest/gtest.h>

#include <fstream>
#include <future>
#include <thread>

#include "base/scoped_temp_dir.h"
#include "kafka_test_env.h"
#include "tokenfeed/ingest.h"
#include "tokenfeed/topic.h"
#include "tokenizer/test_tokenizers.h"

namespace tokenfeed::kafka::testing {
namespace {

using std::chrono::milliseconds;

class IngestClusterTest : public KafkaBrokerTest {};

// Every record of every partition, as "partition:bytes".
std::vector<std::string> AllRecords(const std::string& uri, const topic::TopicConfig& config) {
  std::vector<std::string> out;
  auto summary = topic::DescribeTopic(uri, config);
  EXPECT_TRUE(summary.ok()) << summary.status().ToString();
  if (!summary.ok()) return out;
  for (const auto& p : summary->partitions) {
    auto cursor = topic::OpenPartitionCursor(uri, p.partition, config);
    EXPECT_TRUE(cursor.ok()) << cursor.status().ToString();
    if (!cursor.ok()) return out;
    for (int rounds = 0; (*cursor)->position() < p.end_offset && rounds < 5000; ++rounds) {
      auto batch = (*cursor)->Read(milliseconds(1000));
      EXPECT_TRUE(batch.ok()) << batch.status().ToString();
      if (!batch.ok()) return out;
      for (const auto& r : *batch) {
        out.push_back(std::to_string(p.partition.value()) + ":" +
                      std::string(reinterpret_cast<const char*>(r.bytes.data()), r.bytes.size()));
      }
    }
  }
  return out;
}

void WriteCorpus(const std::string& path, int documents, uint64_t seed) {
  std::ofstream out(path);
  uint64_t x = seed;
  const char* words[] = {"alpha", "beta", "gamma", "数据", "管道", "données", "🙂", "1234", "x=y+1;"};
  for (int i = 0; i < documents; ++i) {
    out << "{\"text\": \"";
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const int n = 5 + static_cast<int>((x >> 33) % 120);
    for (int k = 0; k < n; ++k) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      out << words[(x >> 40) % 9] << ' ';
    }
    out << "#" << seed << "." << i << "\"}\n";
  }
}

TEST_F(IngestClusterTest, LeaderKilledMidRunCompletesWithEveryDocumentOnce) {
  const std::string tokenizer = tokenizer::TestTokenizerPath("deepseek_v3");
  if (!std::ifstream(tokenizer)) {
    if (tokenizer::ReferenceRequired()) FAIL() << tokenizer << " is missing";
    GTEST_SKIP() << tokenizer << " is missing (run scripts/setup.sh)";
  }
  ScopedTempDir dir;
  ASSERT_TRUE(FileSystem::Posix()->CreateDir(dir.Join("in")).ok());
  constexpr int kDocuments = 120000;
  WriteCorpus(dir.Join("in/a.jsonl"), kDocuments / 2, 1);
  WriteCorpus(dir.Join("in/b.jsonl"), kDocuments / 2, 2);

  ingest::IngestOptions o;
  o.tokenizer_path = tokenizer;
  o.inputs = {dir.Join("in")};
  o.writer.partitions = 3;
  o.batch_bytes = 64 << 10;
  o.progress = ingest::ProgressMode::kNever;
  o.threads = 1;
  o.to_uri = "log:" + dir.Join("ref");
  auto reference = ingest::RunIngest(o);
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();
  ASSERT_EQ(reference->documents_written, static_cast<uint64_t>(kDocuments));

  const std::string name = NewTopicName();  // the ingest creates it
  o.to_uri = "kafka://" + bootstrap_ + "/" + name;
  o.writer.replication_factor = 3;
  o.writer.kafka_timeout = milliseconds(60000);
  auto run = std::async(std::launch::async, [&o] { return ingest::RunIngest(o); });

  // Kill partition 0's leader once a few thousand records are in.
  int32_t victim = -1;
  const auto deadline = std::chrono::steady_clock::now() + milliseconds(120000);
  while (victim < 0 && std::chrono::steady_clock::now() < deadline &&
         run.wait_for(milliseconds(20)) == std::future_status::timeout) {
    auto wm = admin().QueryWatermarks(name);
    if (!wm.ok()) continue;
    int64_t total = 0;
    for (const auto& w : *wm) total += w.high;
    if (total < 3000) continue;
    auto info = admin().DescribeTopic(name);
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    for (const auto& p : info->partitions) ASSERT_EQ(p.replicas.size(), 3u);
    // Asked before the kill: a request that lands on the broker being killed fails in transport.
    auto configs = admin().DescribeTopicConfigs(name);
    ASSERT_TRUE(configs.ok()) << configs.status().ToString();
    bool min_isr_seen = false;
    for (const auto& [k, v] : *configs) {
      if (k == "min.insync.replicas") {
        min_isr_seen = true;
        EXPECT_EQ(v, "2");
      }
    }
    EXPECT_TRUE(min_isr_seen) << "the topic's configuration has no min.insync.replicas";
    victim = info->partitions[0].leader;
    ASSERT_EQ(KafkaLocal(state_dir_, "kill-node " + std::to_string(victim)), 0);
  }
  if (victim < 0) {
    auto early = run.get();
    FAIL() << "the ingest ended before a broker could be killed ("
           << (early.ok() ? std::to_string(early->documents_written) + " documents written"
                          : early.status().ToString())
           << "): use a larger corpus";
  }
  auto stats = run.get();
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->documents_written, static_cast<uint64_t>(kDocuments));
  ASSERT_EQ(KafkaLocal(state_dir_, "start-node " + std::to_string(victim)), 0);

  topic::TopicConfig read;
  read.kafka_timeout = milliseconds(30000);
  const auto want = AllRecords("log:" + dir.Join("ref"), read);
  const auto got = AllRecords(o.to_uri, read);
  ASSERT_EQ(got.size(), want.size());
  EXPECT_TRUE(got == want) << "the Kafka partitions differ from the log's";
}

}  // namespace
}  // namespace tokenfeed::kafka::testing
