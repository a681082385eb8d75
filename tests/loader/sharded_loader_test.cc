// The sharded loader (LoaderOptions::shards > 1): the global batches do not
// depend on the world size, each rank reads about 1/world_size of the
// records, and states resume exactly -- at the same world size from each
// rank's own state, at another from the merged states.
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/scoped_temp_dir.h"
#include "loader_test_topics.h"
#include "tokenfeed/loader.h"
#include "tokenfeed/topic.h"

namespace tokenfeed {
namespace {

constexpr uint32_t kShards = 4;

LoaderOptions Sharded(const std::string& uri, uint32_t batch, uint32_t rank, uint32_t world) {
  LoaderOptions o = Opts({{uri, 1}}, 16, batch);
  o.shards = kShards;
  o.epochs = 0;
  o.rank = rank;
  o.world_size = world;
  return o;
}

// `steps` global steps of a run of `world` ranks (global batch 8), as the
// global sample sequence: sample j of step k is row i of rank j % world,
// where j = k * 8 + rank + world * i.
struct RankRun {
  std::map<uint64_t, std::vector<int64_t>> samples;  // by global sample
  std::vector<LoaderMetrics> metrics;                // by rank
  std::vector<std::string> states;                   // by rank, after the steps
};

RankRun RunRanks(const std::string& uri, uint32_t world, uint32_t steps, uint64_t first_step = 0,
             const std::string& state = "") {
  RankRun run;
  const uint32_t batch = 8 / world;
  for (uint32_t r = 0; r < world; ++r) {
    auto l = Make(Sharded(uri, batch, r, world));
    if (l == nullptr) return run;
    if (!state.empty()) {
      Status loaded = l->LoadState(state);
      EXPECT_TRUE(loaded.ok()) << loaded.ToString();
    }
    auto rows = Drain(*l, steps);
    EXPECT_EQ(rows.size(), size_t{steps} * batch);
    for (size_t n = 0; n < rows.size(); ++n) {
      const uint64_t k = first_step + n / batch, i = n % batch;
      run.samples[k * 8 + r + uint64_t{world} * i] = rows[n];
    }
    run.metrics.push_back(l->Metrics());
    run.states.push_back(l->State());
  }
  return run;
}

class ShardedLoaderTest : public ::testing::Test {
 protected:
  ScopedTempDir dir_;
};

TEST_F(ShardedLoaderTest, TheGlobalBatchesDoNotDependOnTheWorldSize) {
  const std::string uri = MakeTopic(dir_, "t", 3, 2000);
  const RankRun one = RunRanks(uri, 1, 60);
  ASSERT_EQ(one.samples.size(), 480u);
  for (uint32_t world : {2u, 4u}) {
    const RankRun many = RunRanks(uri, world, 60);
    EXPECT_EQ(many.samples, one.samples) << "world size " << world;
  }
  // Not the unsharded stream, and not one shard's documents repeated.
  LoaderOptions plain = Opts({{uri, 1}}, 16, 8);
  plain.epochs = 0;
  auto unsharded = Make(plain);
  auto rows = Drain(*unsharded, 60);
  ASSERT_EQ(rows.size(), 480u);
  size_t same = 0;
  for (size_t j = 0; j < rows.size(); ++j) same += rows[j] == one.samples.at(j);
  EXPECT_LT(same, 20u);
}

TEST_F(ShardedLoaderTest, EachRankReadsItsShareOfTheRecords) {
  // 4000 documents, ~19 tokens each: 4700 steps of 8 x 16 cover them about
  // 1.2 times; the shards go through their blocks at the same pace.
  const std::string uri = MakeTopic(dir_, "t", 4, 4000);
  const uint32_t steps = 600;
  const RankRun one = RunRanks(uri, 1, steps);
  const RankRun four = RunRanks(uri, 4, steps);
  uint64_t total = 0;
  for (const LoaderMetrics& m : four.metrics) {
    total += m.records_read;
    // Balanced: each rank about a quarter (whole windows of 64 records apart).
    EXPECT_LT(m.records_read, one.metrics[0].records_read / 4 + 3 * 64) << m.records_read;
  }
  EXPECT_GT(one.metrics[0].records_read, 1000u);
  EXPECT_LE(total, one.metrics[0].records_read * 5 / 4);
  // The unsharded stream: every rank reads every record.
  uint64_t unsharded = 0;
  for (uint32_t r = 0; r < 4; ++r) {
    LoaderOptions o = Opts({{uri, 1}}, 16, 2);
    o.epochs = 0;
    o.rank = r;
    o.world_size = 4;
    auto l = Make(o);
    Drain(*l, steps);
    unsharded += l->Metrics().records_read;
  }
  EXPECT_GT(unsharded, total * 3);
}

TEST_F(ShardedLoaderTest, EachRankResumesFromItsOwnState) {
  const std::string uri = MakeTopic(dir_, "t", 3, 1500);
  const RankRun whole = RunRanks(uri, 2, 50);
  const RankRun first = RunRanks(uri, 2, 20);
  RankRun rest;
  for (uint32_t r = 0; r < 2; ++r) {
    auto l = Make(Sharded(uri, 4, r, 2));
    ASSERT_TRUE(l->LoadState(first.states[r]).ok());
    auto rows = Drain(*l, 30);
    for (size_t n = 0; n < rows.size(); ++n) {
      const uint64_t k = 20 + n / 4, i = n % 4;
      rest.samples[k * 8 + r + 2 * i] = rows[n];
    }
  }
  for (const auto& [j, row] : rest.samples) EXPECT_EQ(row, whole.samples.at(j)) << "sample " << j;
  EXPECT_EQ(rest.samples.size(), 240u);
  // A rank's state names only its shards: another rank cannot load it.
  auto other = Make(Sharded(uri, 4, 1, 2));
  Status s = other->LoadState(first.states[0]);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("shard 1"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("merge"), std::string::npos) << s.ToString();
}

TEST_F(ShardedLoaderTest, MergedStatesResumeAtAnotherWorldSize) {
  const std::string uri = MakeTopic(dir_, "t", 3, 1500);
  const RankRun whole = RunRanks(uri, 1, 50);
  const RankRun first = RunRanks(uri, 4, 20);
  auto merged = MergeLoaderStates(first.states);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  for (uint32_t world : {1u, 2u}) {
    const RankRun rest = RunRanks(uri, world, 30, 20, *merged);
    ASSERT_EQ(rest.samples.size(), 240u);
    for (const auto& [j, row] : rest.samples) EXPECT_EQ(row, whole.samples.at(j)) << "sample " << j;
  }
  // A missing rank, or states of different steps, are refused.
  auto missing = MergeLoaderStates({first.states[0], first.states[1], first.states[2]});
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("shard 3"), std::string::npos) << missing.status().ToString();
  const RankRun later = RunRanks(uri, 4, 21);
  auto mixed = MergeLoaderStates({first.states[0], first.states[1], first.states[2], later.states[3]});
  EXPECT_FALSE(mixed.ok());
  EXPECT_NE(mixed.status().message().find("same step"), std::string::npos) << mixed.status().ToString();
}

TEST_F(ShardedLoaderTest, OptionsThatCannotHoldAreRefused) {
  const std::string uri = MakeTopic(dir_, "t", 2, 300);
  auto b = Loader::Create(Sharded(uri, 2, 0, 3));
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("does not divide shards=4"), std::string::npos) << b.status().ToString();
  // Another shard count is another stream.
  auto l = Make(Sharded(uri, 8, 0, 1));
  Drain(*l, 3);
  LoaderOptions eight = Sharded(uri, 8, 0, 1);
  eight.shards = 8;
  auto m = Make(eight);
  Status s = m->LoadState(l->State());
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("shards"), std::string::npos) << s.ToString();
}

// ---- Finite epochs (docs/loader.md, "Shards"): the run ends after the
// step by which every shard has consumed its blocks of the passes.

struct FiniteRun {
  std::map<uint64_t, std::vector<int64_t>> samples;  // by global sample
  std::vector<size_t> steps;                         // by rank
  std::vector<std::string> states;                   // by rank, at `stop` (or the end)
  std::vector<uint32_t> ended_source;                // by rank
  uint64_t records_read = 0;                         // all ranks
};

// A run of `world` ranks (global batch 8) of `options`, each rank to the end
// of the round (or `stop` steps), from `state` if given.
FiniteRun RunFinite(const LoaderOptions& options, uint32_t world, size_t stop = SIZE_MAX, uint64_t first_step = 0,
                    const std::string& state = "") {
  FiniteRun run;
  const uint32_t batch = 8 / world;
  for (uint32_t r = 0; r < world; ++r) {
    LoaderOptions o = options;
    o.batch_size = batch;
    o.rank = r;
    o.world_size = world;
    auto l = Make(o);
    if (l == nullptr) return run;
    if (!state.empty()) {
      Status loaded = l->LoadState(state);
      EXPECT_TRUE(loaded.ok()) << loaded.ToString();
    }
    auto rows = Drain(*l, stop);
    for (size_t n = 0; n < rows.size(); ++n) {
      const uint64_t k = first_step + n / batch, i = n % batch;
      run.samples[k * 8 + r + uint64_t{world} * i] = rows[n];
    }
    run.steps.push_back(rows.size() / batch);
    run.states.push_back(l->State());
    run.ended_source.push_back(l->Metrics().ended_source.value_or(UINT32_MAX));
    run.records_read += l->Metrics().records_read;
  }
  return run;
}

LoaderOptions Finite(const std::string& uri, uint32_t epochs) {
  LoaderOptions o = Sharded(uri, 8, 0, 1);
  o.epochs = epochs;
  return o;
}

// Every token (1000 * d + i) of documents [0, docs) appears in some row.
void ExpectEveryTokenIn(const std::map<uint64_t, std::vector<int64_t>>& samples, uint32_t docs) {
  std::set<int64_t> seen;
  for (const auto& [j, row] : samples) seen.insert(row.begin(), row.end());
  size_t missing = 0;
  for (uint32_t d = 0; d < docs; ++d) {
    for (uint32_t i = 0; i < DocLen(d); ++i) missing += seen.count(int64_t{kStride} * d + i) == 0 ? 1 : 0;
  }
  EXPECT_EQ(missing, 0u);
}

TEST_F(ShardedLoaderTest, AFiniteRunEndsAtOneStepOnEveryRankForEveryWorldSize) {
  const std::string uri = MakeTopic(dir_, "t", 2, 300);
  // Without the token index, each rank reads the records to count them.
  FiniteRun unindexed = RunFinite(Finite(uri, 1), 1);
  BuildTokenIndex(uri, 2);
  const LoaderOptions o = Finite(uri, 1);
  FiniteRun one = RunFinite(o, 1);
  EXPECT_EQ(unindexed.samples, one.samples);
  EXPECT_EQ(unindexed.records_read, one.records_read + 300);
  ASSERT_EQ(one.steps.size(), 1u);
  ASSERT_GT(one.steps[0], 0u);
  EXPECT_EQ(one.ended_source[0], 0u);
  // One pass holds every token; the run stops within a window of each shard
  // past it (300 documents of 19 tokens on average, rows of 16).
  ExpectEveryTokenIn(one.samples, 300);
  EXPECT_LT(one.steps[0] * 8 * 16, 2 * 300 * 19);
  // Nothing past the round's last windows is read ahead: 708 records of
  // 600 here (964 reading ahead).
  EXPECT_LE(one.records_read, 600u * 5 / 4);
  for (uint32_t world : {2u, 4u}) {
    FiniteRun run = RunFinite(o, world);
    for (size_t steps : run.steps) EXPECT_EQ(steps, one.steps[0]) << "world " << world;
    EXPECT_EQ(run.samples, one.samples) << "world " << world;
  }
  // Two passes: the same stream, on to a later end.
  FiniteRun two = RunFinite(Finite(uri, 2), 2);
  EXPECT_GT(two.steps[0], one.steps[0]);
  EXPECT_EQ(two.steps[0], two.steps[1]);
  for (const auto& [j, row] : one.samples) EXPECT_EQ(two.samples[j], row) << "sample " << j;
}

TEST_F(ShardedLoaderTest, AFiniteRunResumesExactlyAndAtAnotherWorldSize) {
  const std::string uri = MakeTopic(dir_, "t", 2, 300);
  const LoaderOptions o = Finite(uri, 1);
  FiniteRun whole = RunFinite(o, 2);
  ASSERT_GT(whole.steps[0], 4u);
  const size_t k = whole.steps[0] / 2;
  FiniteRun first = RunFinite(o, 2, k);
  // The same world size: each rank from its own state.
  std::map<uint64_t, std::vector<int64_t>> resumed = first.samples;
  for (uint32_t r = 0; r < 2; ++r) {
    LoaderOptions mine = o;
    mine.batch_size = 4;
    mine.rank = r;
    mine.world_size = 2;
    auto l = Make(mine);
    ASSERT_TRUE(l->LoadState(first.states[r]).ok());
    auto rows = Drain(*l);
    EXPECT_EQ(rows.size(), (whole.steps[0] - k) * 4);
    for (size_t n = 0; n < rows.size(); ++n) resumed[(k + n / 4) * 8 + r + 2 * (n % 4)] = rows[n];
  }
  EXPECT_EQ(resumed, whole.samples);
  // Another world size, from the merged states.
  auto merged = MergeLoaderStates(first.states);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  FiniteRun four = RunFinite(o, 4, SIZE_MAX, k, *merged);
  for (size_t steps : four.steps) EXPECT_EQ(k + steps, whole.steps[0]);
  std::map<uint64_t, std::vector<int64_t>> elastic = first.samples;
  elastic.insert(four.samples.begin(), four.samples.end());
  EXPECT_EQ(elastic, whole.samples);
}

TEST_F(ShardedLoaderTest, TheNextRoundOfAFiniteRunGoesOnWithTheShards) {
  const std::string uri = MakeTopic(dir_, "t", 2, 300);
  // Two rounds of one pass give the samples of one run of two passes.
  FiniteRun two = RunFinite(Finite(uri, 2), 1);
  auto l = Make(Finite(uri, 1));
  std::vector<std::vector<int64_t>> rows = Drain(*l);
  const size_t first_round = rows.size() / 8;
  ASSERT_TRUE(l->StartNextRound().ok());
  std::vector<Batch> kept;
  auto more = Drain(*l, SIZE_MAX, &kept);
  ASSERT_FALSE(kept.empty());
  EXPECT_EQ(kept.front().step, first_round);  // the global step counts on
  rows.insert(rows.end(), more.begin(), more.end());
  EXPECT_EQ(rows.size(), two.steps[0] * 8);
  for (size_t j = 0; j < rows.size(); ++j) EXPECT_EQ(rows[j], two.samples[j]) << "sample " << j;
  // A state saved in the second round resumes in it.
  auto again = Make(Finite(uri, 1));
  Drain(*again);
  ASSERT_TRUE(again->StartNextRound().ok());
  Drain(*again, 2);
  auto resumed = Make(Finite(uri, 1));
  ASSERT_TRUE(resumed->LoadState(again->State()).ok());
  auto rest = Drain(*resumed);
  EXPECT_EQ(first_round * 8 + 16 + rest.size(), rows.size());
}

TEST_F(ShardedLoaderTest, AFiniteMixedRunEndsWhenEverySourceIsDone) {
  const std::string big = MakeTopic(dir_, "big", 2, 400);
  const std::string small = MakeTopic(dir_, "small", 1, 60, 100000);
  LoaderOptions o = Finite(big, 1);
  o.sources = {{big, 1}, {small, 1}};
  FiniteRun one = RunFinite(o, 1);
  FiniteRun four = RunFinite(o, 4);
  EXPECT_EQ(four.samples, one.samples);
  for (size_t steps : four.steps) EXPECT_EQ(steps, one.steps[0]);
  EXPECT_EQ(one.ended_source[0], 0u);  // the large source, given the same weight, ends it
  ExpectEveryTokenIn(one.samples, 400);
}

}  // namespace
}  // namespace tokenfeed
