#include "loader/loader_state.h"

#include <string>

#include <gtest/gtest.h>

namespace tokenfeed::loader {
namespace {

// A state as the loader writes it: two sources, the second in its second
// epoch, in the second round.
const std::string kState =
    R"({"version":1,"fingerprint":"8c1d6b1f0a3e5d27","samples":96,"mixer":[67,29],)"
    R"("sources":[{"epoch":1,"window":0,"doc":12,"token":3},{"epoch":2,"window":1,"doc":0,"token":0}],)"
    R"("epoch_base":1,"settings":{"seq_len":"16","seed":"7","source 0":"log:/data/a@0.7",)"
    R"("source 1":"log:/data/b@0.3"},"snapshot":[{"uri":"log:/data/a","partitions":[[0,150],[0,150]]},)"
    R"({"uri":"log:/data/b","partitions":[[10,300]]}]})";

TEST(LoaderStateTest, ParsesEveryFieldAndWritesTheSameText) {
  auto state = ParseLoaderState(kState);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_EQ(state->fingerprint, "8c1d6b1f0a3e5d27");
  EXPECT_EQ(state->samples, 96u);
  EXPECT_EQ(state->mixer, (std::vector<uint64_t>{67, 29}));
  ASSERT_EQ(state->positions.size(), 2u);
  EXPECT_EQ(state->positions[0], (SourcePosition{1, 0, 12, 3}));
  EXPECT_EQ(state->positions[1], (SourcePosition{2, 1, 0, 0}));
  EXPECT_EQ(state->epoch_base, 1u);
  ASSERT_TRUE(state->settings.has_value());
  ASSERT_EQ(state->settings->size(), 4u);
  EXPECT_EQ((*state->settings)[2], (StateSetting{"source 0", "log:/data/a@0.7"}));
  ASSERT_EQ(state->snapshot.sources.size(), 2u);
  EXPECT_EQ(state->snapshot.sources[0].uri, "log:/data/a");
  EXPECT_EQ(state->snapshot.sources[0].partitions, (std::vector<PartitionRange>{{0, 150}, {0, 150}}));
  EXPECT_EQ(state->snapshot.sources[1].partitions, (std::vector<PartitionRange>{{10, 300}}));
  EXPECT_EQ(LoaderStateJson(*state), kState);
}

// A rank's state of a sharded run: its shards' mixers and positions, none
// at the top level.
const std::string kShardState =
    R"({"version":1,"fingerprint":"ab","samples":40,"mixer":[],"sources":[],"epoch_base":0,"shard_count":4,)"
    R"("shards":[{"shard":1,"mixer":[10],"sources":[{"epoch":0,"window":3,"doc":5,"token":2}]},)"
    R"({"shard":3,"mixer":[10],"sources":[{"epoch":0,"window":2,"doc":9,"token":0}]}],)"
    R"("snapshot":[{"uri":"log:/data/a","partitions":[[0,150]]}]})";

TEST(LoaderStateTest, AShardedStateParsesAndWritesTheSameText) {
  auto state = ParseLoaderState(kShardState);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_EQ(state->shard_count, 4u);
  ASSERT_EQ(state->shards.size(), 2u);
  EXPECT_EQ(state->shards[1].shard, 3u);
  EXPECT_EQ(state->shards[1].positions[0], (SourcePosition{0, 2, 9, 0}));
  EXPECT_EQ(LoaderStateJson(*state), kShardState);
  // A count below 2, a shard out of range or listed twice are refused.
  for (auto [from, to] : {std::pair<std::string, std::string>{"\"shard_count\":4", "\"shard_count\":1"},
                          {"\"shard\":3", "\"shard\":4"},
                          {"\"shard\":3", "\"shard\":1"}}) {
    std::string bad = kShardState;
    bad.replace(bad.find(from), from.size(), to);
    EXPECT_FALSE(ParseLoaderState(bad).ok()) << bad;
  }
}

TEST(LoaderStateTest, MergingTakesEveryShardOnceFromStatesOfOneStep) {
  LoaderState a = ParseLoaderState(kShardState).value();  // shards 1 and 3
  LoaderState b = a;
  b.shards = {{0, {10}, {{0, 1, 0, 0}}}, {2, {10}, {{0, 4, 1, 1}}}};
  auto merged = MergeLoaderStates({b, a});
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  ASSERT_EQ(merged->shards.size(), 4u);
  for (uint32_t i = 0; i < 4; ++i) EXPECT_EQ(merged->shards[i].shard, i);
  EXPECT_EQ(merged->shards[3], a.shards[1]);
  // Missing a shard; another step; the same shard at two positions.
  auto missing = MergeLoaderStates({a});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("shard 0"), std::string::npos) << missing.status().ToString();
  LoaderState later = b;
  later.samples = 48;
  EXPECT_NE(MergeLoaderStates({a, later}).status().message().find("same step"), std::string::npos);
  LoaderState other = b;
  other.shards.push_back({3, {11}, {{0, 2, 9, 1}}});
  EXPECT_NE(MergeLoaderStates({a, other}).status().message().find("differs"), std::string::npos);
  // Unsharded states are whole already.
  LoaderState plain;
  EXPECT_FALSE(MergeLoaderStates({plain}).ok());
}

// A state of the first round written before epoch_base existed, and one
// without settings: both load (the fingerprint decides).
TEST(LoaderStateTest, EpochBaseAndSettingsMayBeAbsent) {
  auto state = ParseLoaderState(
      R"({"version":1,"fingerprint":"f","samples":0,"mixer":[0],"sources":[{"epoch":0,"window":0,"doc":0,)"
      R"("token":0}],"snapshot":[{"uri":"log:t","partitions":[]}]})");
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_EQ(state->epoch_base, 0u);
  EXPECT_FALSE(state->settings.has_value());
  auto again = ParseLoaderState(LoaderStateJson(*state));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, *state);
}

// Strings come back as they went in (quotes, backslashes, control
// characters, UTF-8); a setting that is no string is kept as such, so that
// it counts as absent when a refused state names its differences.
// Since replay needs them: the run's step shape and exact weights ("run"),
// written before the snapshot; a state without them (older) still parses.
TEST(LoaderStateTest, TheRunShapeParsesAndWritesTheSameTextAndMayBeAbsent) {
  const std::string with_run =
      R"({"version":1,"fingerprint":"8c1d6b1f0a3e5d27","samples":96,"mixer":[67,29],)"
      R"("sources":[{"epoch":1,"window":0,"doc":12,"token":3},{"epoch":2,"window":1,"doc":0,"token":0}],)"
      R"("epoch_base":1,"settings":{"seq_len":"16"},"run":{"batch_size":3,"world_size":2,)"
      R"("weights":[0.69999999999999996,0.10000000000000001]},"snapshot":[]})";
  auto state = ParseLoaderState(with_run);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  ASSERT_TRUE(state->run.has_value());
  EXPECT_EQ(state->run->batch_size, 3u);
  EXPECT_EQ(state->run->world_size, 2u);
  EXPECT_EQ(state->run->weights, (std::vector<double>{0.7, 0.1}));  // the same doubles, bit for bit
  EXPECT_EQ(LoaderStateJson(*state), with_run);
  EXPECT_FALSE(ParseLoaderState(kState)->run.has_value());
  for (const char* bad : {R"("run":{"batch_size":0,"world_size":2,"weights":[]})",
                          R"("run":{"batch_size":3,"weights":[1]})", R"("run":{"batch_size":3,"world_size":2,)"
                                                                     R"("weights":["x"]})",
                          R"("run":{"batch_size":3,"world_size":2,"weights":[-1]})", R"("run":7)"}) {
    std::string text = kState;
    text.insert(text.size() - 1, std::string(",") + bad);
    auto refused = ParseLoaderState(text);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_NE(refused.status().message().find("run"), std::string::npos) << refused.status().ToString();
  }
}

TEST(LoaderStateTest, StringsAndOddSettingsSurviveARoundTrip) {
  LoaderState state;
  state.fingerprint = "00ff";
  state.mixer = {1};
  state.positions = {{0, 0, 0, 0}};
  state.settings = std::vector<StateSetting>{{"seed", std::nullopt}, {"source 0", "log:a \"b\"\\c\n\x01\xc3\xa9@1"}};
  state.snapshot.sources = {{"log:a \"b\"\\c\n\x01\xc3\xa9", {{5, 5}}}};
  const std::string text = LoaderStateJson(state);
  EXPECT_NE(text.find(R"("seed":null)"), std::string::npos) << text;
  auto again = ParseLoaderState(text);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, state);
  auto numeric = ParseLoaderState(
      R"({"version":1,"fingerprint":"f","samples":0,"mixer":[],"sources":[],"snapshot":[],"settings":{"seed":7}})");
  ASSERT_TRUE(numeric.ok()) << numeric.status().ToString();
  EXPECT_EQ(*numeric->settings, (std::vector<StateSetting>{{"seed", std::nullopt}}));
}

TEST(LoaderStateTest, WhatIsNotAWellFormedStateIsRefusedByName) {
  auto refused = [](const std::string& text) { return ParseLoaderState(text).status(); };
  EXPECT_NE(refused("not json").message().find("not valid JSON"), std::string::npos);
  EXPECT_NE(refused(R"({"version": 1})").message().find("not a tokenfeed loader state"), std::string::npos);
  EXPECT_NE(refused("[1, 2]").message().find("not a tokenfeed loader state"), std::string::npos);
  std::string newer = kState;
  newer.replace(newer.find(R"("version":1)"), 11, R"("version":2)");
  Status s = refused(newer);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("version 2"), std::string::npos) << s.ToString();
  auto edited = [](const std::string& from, const std::string& to) {
    std::string text = kState;
    text.replace(text.find(from), from.size(), to);
    return ParseLoaderState(text).status();
  };
  EXPECT_NE(edited("[0,150],[0,150]", "[0,150],[150,0]").message().find("malformed partition range in the "
                                                                        "snapshot of log:/data/a"),
            std::string::npos);
  EXPECT_NE(edited(R"({"uri":"log:/data/b",)", R"({"url":"log:/data/b",)").message().find("malformed snapshot "
                                                                                           "entry 1"),
            std::string::npos);
  EXPECT_NE(edited("[67,29]", "[67,-29]").message().find("malformed mixer counts"), std::string::npos);
  EXPECT_NE(edited(R"("doc":12)", R"("doc":4294967296)").message().find("malformed source position"),
            std::string::npos);
  EXPECT_TRUE(edited(R"("doc":12)", R"("doc":4294967295)").ok());
  EXPECT_NE(edited(R"("epoch_base":1)", R"("epoch_base":"1")").message().find("malformed epoch_base"),
            std::string::npos);
  for (const std::string& text : {std::string("not json"), kState.substr(0, kState.size() / 2)}) {
    EXPECT_EQ(refused(text).code(), StatusCode::kInvalidArgument) << text;
  }
}

TEST(LoaderStateTest, SnapshotParsesAndWritesTheSameText) {
  const std::string text = R"([{"uri":"log:/data/a","partitions":[[0,150],[3,3]]},{"uri":"kafka://b:9092/t",)"
                           R"("partitions":[]}])";
  auto snapshot = ParseSnapshot(text);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  ASSERT_EQ(snapshot->sources.size(), 2u);
  EXPECT_EQ(snapshot->sources[1].uri, "kafka://b:9092/t");
  EXPECT_EQ(SnapshotJson(*snapshot), text);
  EXPECT_NE(ParseSnapshot("{}").status().message().find("not a list of sources"), std::string::npos);
  EXPECT_NE(ParseSnapshot("[").status().message().find("not valid JSON"), std::string::npos);
}

// Token accounting: the "consumed" member (per source, per epoch), added to
// version 1 states: one written before it still loads, counting from its
// sample.
const std::string kCountedState =
    R"({"version":1,"fingerprint":"ab","samples":96,"mixer":[67,29],)"
    R"("sources":[{"epoch":1,"window":0,"doc":12,"token":3},{"epoch":2,"window":1,"doc":0,"token":0}],)"
    R"("epoch_base":0,"consumed":{"version":1,"from_sample":0,"sources":[[{"epoch":0,"tokens":900,"documents":40},)"
    R"({"epoch":1,"tokens":172,"documents":9}],[]]},)"
    R"("snapshot":[{"uri":"log:/data/a","partitions":[[0,150]]},{"uri":"log:/data/b","partitions":[[0,9]]}]})";

TEST(LoaderStateTest, ConsumedCountsParseAndWriteTheSameText) {
  auto state = ParseLoaderState(kCountedState);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_EQ(state->consumed_from, 0u);
  ASSERT_EQ(state->consumed.size(), 2u);
  EXPECT_EQ(state->consumed[0], (std::vector<EpochTally>{{0, 900, 40}, {1, 172, 9}}));
  EXPECT_TRUE(state->consumed[1].empty());
  EXPECT_EQ(LoaderStateJson(*state), kCountedState);

  // Written before the counts: none, counted from the state's sample on.
  auto old = ParseLoaderState(kState);
  ASSERT_TRUE(old.ok());
  EXPECT_TRUE(old->consumed.empty());
  EXPECT_EQ(old->consumed_from, 96u);

  auto edited = [](const std::string& from, const std::string& to) {
    std::string text = kCountedState;
    text.replace(text.find(from), from.size(), to);
    return ParseLoaderState(text).status();
  };
  EXPECT_EQ(edited(R"("consumed":{"version":1)", R"("consumed":{"version":2)").code(), StatusCode::kUnsupported);
  EXPECT_NE(edited(R"("consumed":{"version":1)", R"("consumed":{"version":2)").message().find("consumed counts are "
                                                                                              "of version 2"),
            std::string::npos);
  EXPECT_NE(edited(R"("from_sample":0)", R"("from_sample":97)").message().find("malformed consumed member"),
            std::string::npos);
  EXPECT_NE(edited(R"({"epoch":1,"tokens":172)", R"({"epoch":0,"tokens":172)").message().find("increasing order"),
            std::string::npos);
  EXPECT_NE(edited(R"("tokens":900)", R"("tokens":-1)").message().find("malformed consumed counts"),
            std::string::npos);
}

TEST(LoaderStateTest, ShardCountsTravelWithTheirShardsThroughAMerge) {
  const std::string rank0 =
      R"({"version":1,"fingerprint":"ab","samples":40,"mixer":[],"sources":[],"epoch_base":0,"shard_count":2,)"
      R"("shards":[{"shard":0,"mixer":[20],"sources":[{"epoch":0,"window":3,"doc":5,"token":2}],)"
      R"("consumed":[[{"epoch":0,"tokens":320,"documents":11}]]}],"consumed":{"version":1,"from_sample":0},)"
      R"("snapshot":[{"uri":"log:/data/a","partitions":[[0,150]]}]})";
  std::string rank1 = rank0;
  rank1.replace(rank1.find(R"("shard":0)"), 9, R"("shard":1)");
  rank1.replace(rank1.find(R"("tokens":320,"documents":11)"), 27, R"("tokens":330,"documents":12)");
  auto a = ParseLoaderState(rank0), b = ParseLoaderState(rank1);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status().ToString() << b.status().ToString();
  EXPECT_EQ(LoaderStateJson(*a), rank0);
  auto merged = MergeLoaderStates({*a, *b});
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  ASSERT_EQ(merged->shards.size(), 2u);
  EXPECT_EQ(merged->shards[0].consumed[0], (std::vector<EpochTally>{{0, 320, 11}}));
  EXPECT_EQ(merged->shards[1].consumed[0], (std::vector<EpochTally>{{0, 330, 12}}));
  auto again = ParseLoaderState(LoaderStateJson(*merged));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *merged);
}

}  // namespace
}  // namespace tokenfeed::loader
