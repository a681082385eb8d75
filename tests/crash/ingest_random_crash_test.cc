// The randomized crash test of the ingest into the embedded log (the log's
// own rounds are tests/log/log_random_crash_test.cc): each round ingests a
// corpus with a random fsync policy and is stopped, one to four times, at a
// random write or fsync (an injected failure) followed by a power cut of a
// random kind (every unsynced byte lost, a prefix kept, or blocks written
// back out of order with holes); the same ingest is then started again, as
// a user would, until it completes. The topic must then hold exactly the
// records of an uninterrupted run, partition by partition and in order:
// none lost, none doubled, nothing that no run wrote.
//   TOKENFEED_CRASH_ROUNDS (default 6) and TOKENFEED_CRASH_SEED as for the
//   log's crash test; figures on one "[ figures ]" line
//   (docs/crash_testing.md).
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
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

uint64_t EnvNumber(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : fallback;
}

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
      EXPECT_TRUE(batch.ok()) << batch.status().ToString();
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
  o.writer.log_topic.segment_bytes = 64 << 10;  // rolls during the run
  o.writer.log_topic.index_interval_bytes = 4 << 10;
  o.batch_bytes = 8 << 10;
  o.progress = ProgressMode::kNever;
  o.threads = 2;
  return o;
}

TEST(IngestRandomCrashTest, PowerCutsAtRandomWritesResumeToTheSameRecords) {
  const std::string tokenizer = tokenizer::TestTokenizerPath("deepseek_v3");
  if (!std::ifstream(tokenizer)) {
    if (tokenizer::ReferenceRequired()) FAIL() << tokenizer << " is missing";
    GTEST_SKIP() << tokenizer << " is missing (run scripts/setup.sh)";
  }
  const uint64_t rounds = EnvNumber("TOKENFEED_CRASH_ROUNDS", 6);
  const uint64_t seed = EnvNumber("TOKENFEED_CRASH_SEED", 20261203);
  std::mt19937_64 rng(seed);
  ScopedTempDir dir;
  ASSERT_TRUE(FileSystem::Posix()->CreateDir(dir.Join("in")).ok());
  const char* words[] = {"alpha", "beta", "数据", "テキスト", "données", "1234", "x+y"};
  for (int f = 0; f < 3; ++f) {
    std::ofstream out(dir.Join("in/part" + std::to_string(f) + ".txt"));
    for (int i = 0; i < 1500; ++i) {
      for (int w = 0; w < 1 + static_cast<int>(rng() % 30); ++w) out << words[rng() % 7] << ' ';
      out << f << '.' << i << '\n';
    }
  }
  FaultInjectionFileSystem counting;
  IngestOptions ref = Options(dir, tokenizer, "ref");
  ref.writer.log_file_system = &counting;
  auto reference = RunIngest(ref);
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();
  const std::vector<std::string> want = AllRecords(ref.to_uri);
  ASSERT_EQ(want.size(), 4500u);
  const uint64_t appends = counting.OperationCount(FaultInjectionFileSystem::Op::kAppend);

  uint64_t cuts = 0, runs = 0, stopped_runs = 0, modes[4] = {};
  for (uint64_t round = 0; round < rounds; ++round) {
    SCOPED_TRACE("ingest round " + std::to_string(round) + ", seed " + std::to_string(seed));
    FaultInjectionFileSystem fs;
    IngestOptions o = Options(dir, tokenizer, "t" + std::to_string(round));
    o.writer.log_file_system = &fs;
    const int policy = static_cast<int>(rng() % 3);
    o.writer.log.fsync = policy == 0 ? log::FsyncPolicy::kEachBatch
                                     : policy == 1 ? log::FsyncPolicy::kInterval : log::FsyncPolicy::kNone;
    o.writer.log.fsync_interval_bytes = 16 << 10;
    const int crashes = 1 + static_cast<int>(rng() % 4);
    for (int c = 0; c < crashes; ++c) {
      FaultInjectionFileSystem::Fault fault;
      // A failed fsync where the policy syncs every batch, else a failed
      // write; somewhere in the first two thirds of the run's batches (the
      // reference run's appends count index and recovery-point writes too).
      fault.op = policy == 0 && rng() % 2 == 0 ? FaultInjectionFileSystem::Op::kSync
                                               : FaultInjectionFileSystem::Op::kAppend;
      fault.path_contains = ".seg";
      fault.skip = static_cast<uint32_t>(rng() % (appends / 5 + 1));
      fault.partial_bytes = rng() % 8192;
      fs.InjectFault(fault);
      auto stopped = RunIngest(o);
      ++runs;
      stopped_runs += !stopped.ok();
      fs.ClearFaults();
      const int mode = static_cast<int>(rng() % 4);
      FaultInjectionFileSystem::PowerCutOptions cut;
      cut.keep_random_unsynced_prefix = mode >= 1;
      cut.reorder_write_back = mode >= 2;
      cut.block_bytes = mode == 2 ? 512 : 4096;
      cut.seed = rng();
      ASSERT_TRUE(fs.SimulatePowerCut(cut).ok());
      ++cuts;
      ++modes[mode];
      if (stopped.ok()) break;  // the fault came after the last write: the cut still tests the resume
    }
    auto done = RunIngest(o);
    ++runs;
    ASSERT_TRUE(done.ok()) << "the ingest did not resume after a power cut: " << done.status().ToString();
    ASSERT_EQ(AllRecords(o.to_uri), want) << "records lost, doubled or made up";
  }
  std::printf("[ figures ] ingest: %" PRIu64 " rounds (seed %" PRIu64 "), %" PRIu64 " ingest runs (%" PRIu64
              " stopped by a failed write or fsync), %" PRIu64 " power cuts (%" PRIu64 " drop, %" PRIu64
              " prefix, %" PRIu64 " 512-byte holes, %" PRIu64 " 4 KiB holes), %zu records checked per round; findings: %d\n",
              rounds, seed, runs, stopped_runs, cuts, modes[0], modes[1], modes[2], modes[3], want.size(),
              ::testing::Test::HasFailure() ? 1 : 0);
}

}  // namespace
}  // namespace tokenfeed::ingest
