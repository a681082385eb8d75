// The loader following live topics (LoaderOptions::follow): records appended
// while it runs are taken, in an order fixed by their offsets and the seed,
// so a later loader over the same records gives the same batches and resume
// is exact; a block not yet written is waited for, within a bound.
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "base/scoped_temp_dir.h"
#include "loader_test_topics.h"
#include "tokenfeed/loader.h"

namespace tokenfeed {
namespace {

LoaderOptions Follow(const std::string& uri) {
  LoaderOptions o = Opts({{uri, 1}}, 16, 2);
  o.follow = true;
  o.epochs = 0;
  o.window_blocks = 2;
  o.follow_timeout_ms = 20000;
  return o;
}

// The documents whose tokens the rows hold.
std::set<uint32_t> DocsOf(const std::vector<std::vector<int64_t>>& rows) {
  std::set<uint32_t> docs;
  for (const auto& row : rows) {
    for (int64_t t : row) docs.insert(static_cast<uint32_t>(t / kStride));
  }
  return docs;
}

class FollowLoaderTest : public ::testing::Test {
 protected:
  ScopedTempDir dir_;
};

TEST_F(FollowLoaderTest, RecordsAppendedWhileItRunsAreTakenInAFixedOrder) {
  // An empty topic: the loader waits for its first blocks.
  const std::string uri = MakeTopic(dir_, "t", 3, 0);
  auto live = Make(Follow(uri));
  ASSERT_NE(live, nullptr);
  std::thread writer([&] {
    for (uint32_t round = 0; round < 6; ++round) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      AppendDocs(uri, 3, round * 120, 120);
    }
  });
  // 720 documents of 19 tokens on average: 13,680 tokens in complete blocks
  // of 16 (240 documents per partition, 15 blocks each); 400 steps take
  // 12,800 of them.
  std::vector<std::vector<int64_t>> rows;
  std::string state_at_100;
  for (int n = 0; n < 400; ++n) {
    auto rows_now = Drain(*live, 1);
    ASSERT_EQ(rows_now.size(), 2u);
    rows.insert(rows.end(), rows_now.begin(), rows_now.end());
    if (n == 99) state_at_100 = live->State();
  }
  writer.join();
  const std::set<uint32_t> docs = DocsOf(rows);
  EXPECT_GT(*docs.rbegin(), 600u) << "documents of the last appends were read";
  EXPECT_GT(docs.size(), 500u);
  // Over the same records, now all there, a new loader gives the same rows.
  auto later = Make(Follow(uri));
  EXPECT_EQ(Drain(*later, 400), rows);
  // And one resumed at step 100 goes on with the same rows.
  auto resumed = Make(Follow(uri));
  ASSERT_TRUE(resumed->LoadState(state_at_100).ok());
  const auto rest = Drain(*resumed, 300);
  EXPECT_EQ(rest, std::vector<std::vector<int64_t>>(rows.begin() + 200, rows.end()));
  const LoaderMetrics m = live->Metrics();
  EXPECT_GT(m.append_wait_seconds_total, 0.0);
  // Documents appended moments before: fresh, by the writer's clock.
  EXPECT_GT(m.freshness_p99_seconds, 0.0);
  EXPECT_GE(m.freshness_p99_seconds, m.freshness_p50_seconds);
  EXPECT_LT(m.freshness_p99_seconds, 60.0);
  // And per partition: every partition had a document finished.
  ASSERT_FALSE(m.partition_lag.empty());
  for (const LoaderMetrics::PartitionLag& p : m.partition_lag) {
    EXPECT_GE(p.freshness_seconds, 0.0) << "partition " << p.partition;
    EXPECT_LE(p.freshness_seconds, m.freshness_p99_seconds + 60.0);
  }
}

TEST_F(FollowLoaderTest, ABlockNeverWrittenEndsInATimeoutNamingIt) {
  const std::string uri = MakeTopic(dir_, "t", 2, 64);  // two blocks of 16 per partition
  LoaderOptions o = Follow(uri);
  o.follow_timeout_ms = 300;
  auto l = Make(o);
  const auto t0 = std::chrono::steady_clock::now();
  Status failed;
  for (int n = 0; n < 1000 && failed.ok(); ++n) {
    auto b = l->Next();
    if (!b.ok()) failed = b.status();
    if (b.ok()) {
      ASSERT_TRUE(b->has_value()) << "a followed stream does not end";
    }
  }
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.code(), StatusCode::kTimedOut) << failed.ToString();
  EXPECT_NE(failed.message().find("partition 0"), std::string::npos) << failed.ToString();
  EXPECT_NE(failed.message().find("follow_timeout_ms"), std::string::npos) << failed.ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  EXPECT_GE(l->Metrics().append_wait_seconds_total, 0.25);
}

TEST_F(FollowLoaderTest, FollowingNeedsAnEndlessStream) {
  const std::string uri = MakeTopic(dir_, "t", 2, 64);
  LoaderOptions o = Follow(uri);
  o.epochs = 1;
  auto l = Loader::Create(o);
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.status().message().find("epochs=0"), std::string::npos) << l.status().ToString();
}

TEST_F(FollowLoaderTest, ShardsOfALiveTopicReadTheirShareAndMatchOneRank) {
  const std::string uri = MakeTopic(dir_, "t", 3, 1200);
  LoaderOptions one = Follow(uri);
  one.shards = 2;
  one.batch_size = 4;
  auto single = Make(one);
  const auto want = Drain(*single, 40);
  std::vector<std::vector<std::vector<int64_t>>> per_rank;
  for (uint32_t r = 0; r < 2; ++r) {
    LoaderOptions o = Follow(uri);
    o.shards = 2;
    o.rank = r;
    o.world_size = 2;
    auto l = Make(o);
    per_rank.push_back(Drain(*l, 40));
  }
  // Global sample j of step k is row i of rank j % 2, j = 4k + rank + 2i.
  for (size_t k = 0; k < 40; ++k) {
    for (uint32_t r = 0; r < 2; ++r) {
      for (uint32_t i = 0; i < 2; ++i) EXPECT_EQ(per_rank[r][k * 2 + i], want[k * 4 + r + 2 * i]);
    }
  }
}

TEST_F(FollowLoaderTest, ALiveTopicSavedAtTwoRanksGoesOnAtOneWithNothingLostOrRepeated) {
  // Two ranks follow a topic (shards = 2) and save at step 15; records are
  // appended; one rank loads the merged states and follows on. Its rows are
  // those of one rank over the same records from the start: the first 15
  // steps are the two ranks' rows, the rest the resumed rank's.
  const std::string uri = MakeTopic(dir_, "t", 3, 300);
  std::vector<std::string> states;
  std::vector<std::vector<std::vector<int64_t>>> per_rank;
  for (uint32_t r = 0; r < 2; ++r) {
    LoaderOptions o = Follow(uri);
    o.shards = 2;
    o.rank = r;
    o.world_size = 2;
    auto l = Make(o);
    ASSERT_NE(l, nullptr);
    per_rank.push_back(Drain(*l, 15));
    ASSERT_EQ(per_rank.back().size(), 30u);
    states.push_back(l->State());
  }
  AppendDocs(uri, 3, 300, 600);
  Result<std::string> merged = MergeLoaderStates(states);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  LoaderOptions one = Follow(uri);
  one.shards = 2;
  one.batch_size = 4;
  auto resumed = Make(one);
  ASSERT_NE(resumed, nullptr);
  ASSERT_TRUE(resumed->LoadState(*merged).ok());
  const auto rest = Drain(*resumed, 60);
  auto from_start = Make(one);
  ASSERT_NE(from_start, nullptr);
  const auto whole = Drain(*from_start, 75);
  ASSERT_EQ(whole.size(), 300u);
  // Global sample j of step k is row i of rank j % 2, j = 4k + rank + 2i.
  for (size_t k = 0; k < 15; ++k) {
    for (uint32_t r = 0; r < 2; ++r) {
      for (uint32_t i = 0; i < 2; ++i) EXPECT_EQ(per_rank[r][k * 2 + i], whole[k * 4 + r + 2 * i]);
    }
  }
  EXPECT_EQ(rest, std::vector<std::vector<int64_t>>(whole.begin() + 60, whole.end()));
  EXPECT_GT(*DocsOf(rest).rbegin(), 300u) << "documents appended after the save were read";
}

}  // namespace
}  // namespace tokenfeed
