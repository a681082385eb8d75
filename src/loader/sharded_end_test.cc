#include "loader/sharded_end.h"

#include "loader/pass_deal.h"

#include <gtest/gtest.h>

namespace tokenfeed::loader {
namespace {

// One unshuffled source of one partition whose blocks hold one record each,
// of the given token counts.
ShardedEndInput OneSource(std::vector<uint64_t> tokens, uint32_t shards, uint32_t window_blocks) {
  ShardedEndInput in;
  SourceBlockLengths src;
  for (uint32_t b = 0; b < tokens.size(); ++b) {
    src.blocks.push_back({0, b, 1});
    src.records.push_back(1);
  }
  src.tokens = std::move(tokens);
  in.sources.push_back(std::move(src));
  in.weights = {1};
  in.shards = shards;
  in.window_blocks = window_blocks;
  in.shuffle = false;
  in.seq_len = 5;
  return in;
}

ShardedEnd EndOf(const ShardedEndInput& in) {
  Result<ShardedEnd> end = ComputeShardedEnd(in);
  EXPECT_TRUE(end.ok()) << end.status().ToString();
  return end.ok() ? *end : ShardedEnd{};
}

TEST(ShardedEndTest, TheShardThatOwesMostSamplesEndsTheRound) {
  // Each block to the shard dealt least so far: shard 0 holds blocks 0 and 2
  // (20 tokens: 4 samples), shard 1 blocks 1 and 3 (40: 8). Shard 1's 8th
  // sample is global sample 7 * 2 + 1.
  ShardedEnd end = EndOf(OneSource({10, 10, 10, 30}, 2, 1));
  EXPECT_EQ(end.samples, 16u);
  EXPECT_EQ(end.shard, 1u);
  EXPECT_EQ(end.source, 0u);
  // Windows lie within passes: their size changes nothing owed.
  EXPECT_EQ(EndOf(OneSource({10, 10, 10, 30}, 2, 4)).samples, 16u);
}

TEST(ShardedEndTest, PassesBosEosAndUnpackedRowsCount) {
  ShardedEndInput in = OneSource({10, 10, 10, 30}, 2, 1);
  // Two passes: the second deals blocks 0, 1, 2 to shard 0 (then 20 tokens
  // behind) and 3 to shard 1: 70 tokens, 14 samples.
  in.passes = 2;
  EXPECT_EQ(EndOf(in).samples, 13u * 2 + 1 + 1);
  in.passes = 1;
  in.added_per_document = 2;  // shard 1: 40 + 2 * 2 tokens, 9 samples
  EXPECT_EQ(EndOf(in).samples, 8u * 2 + 1 + 1);
  in.pack = false;  // a row per document: 2 per shard
  EXPECT_EQ(EndOf(in).samples, 1u * 2 + 1 + 1);
}

TEST(ShardedEndTest, FewerBlocksThanShardsLeaveSomeShardsAPassWithout) {
  ShardedEndInput in = OneSource({10, 10, 10}, 4, 8);
  // One pass: shards 0-2 a block each (2 samples), shard 3 none.
  ShardedEnd end = EndOf(in);
  EXPECT_EQ(end.samples, 1u * 4 + 2 + 1);
  EXPECT_EQ(end.shard, 2u);
  // Two: blocks 0, 1, 2 go to shards 3, 0, 1; shard 1 owes 4 samples.
  in.passes = 2;
  end = EndOf(in);
  EXPECT_EQ(end.samples, 3u * 4 + 1 + 1);
  EXPECT_EQ(end.shard, 1u);
}

TEST(ShardedEndTest, APassGoesToTheShardsDealtLeastSoFar) {
  std::vector<uint64_t> loads = {0, 0, 0};
  // Weights by block index; the order visits blocks 3, 0, 1, 2, 4.
  const std::vector<uint64_t> weight = {5, 1, 1, 9, 2};
  EXPECT_EQ(DealPass({3, 0, 1, 2, 4}, weight, &loads), (std::vector<uint32_t>{0, 1, 2, 2, 2}));
  EXPECT_EQ(loads, (std::vector<uint64_t>{9, 5, 4}));
  // The next pass goes on from these totals.
  EXPECT_EQ(DealPass({0, 1}, weight, &loads), (std::vector<uint32_t>{2, 1}));
}

TEST(ShardedEndTest, EveryWeightedSourceIsDrawnAsOftenAsItOwes) {
  ShardedEndInput in = OneSource({10, 10}, 1, 1);  // 20 tokens: 4 samples
  SourceBlockLengths big;
  for (uint32_t b = 0; b < 4; ++b) {
    big.blocks.push_back({0, b, 1});
    big.records.push_back(1);
    big.tokens.push_back(20);  // 80 tokens: 16 samples
  }
  in.sources.push_back(big);
  in.weights = {1, 1};
  // Alternating draws: the second source's 16th sample is the 32nd.
  ShardedEnd end = EndOf(in);
  EXPECT_EQ(end.samples, 32u);
  EXPECT_EQ(end.source, 1u);
  in.weights = {1, 0};  // a source of weight 0 owes nothing
  EXPECT_EQ(EndOf(in).samples, 4u);
  // A share so small that reaching it would take more than 2^34 draws.
  in.weights = {1, 1e-12};
  Result<ShardedEnd> refused = ComputeShardedEnd(in);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("too small"), std::string::npos) << refused.status().ToString();
}

TEST(ShardedEndTest, LastWindowsFollowTheShardsBlocksPassByPass) {
  // Shard 1's windows of one block: pass 0 blocks 1 (10 tokens) and 3 (30),
  // pass 1 block 3 again (the rest goes to shard 0, 20 tokens behind).
  ShardedEndInput in = OneSource({10, 10, 10, 30}, 2, 1);
  using W = std::pair<uint64_t, uint64_t>;
  // As the streams deal the passes: a dealer that keeps shard 1.
  auto LastWindows = [&](const ShardedEndInput& with, uint32_t shard, uint64_t samples) {
    PassDealer dealer(with.sources[0].blocks, DealWeights(with, 0), with.shards, with.shuffle, with.seed, 0, {shard});
    return loader::LastWindows(with, shard, samples, {&dealer});
  };
  EXPECT_EQ(LastWindows(in, 1, 2)[0], W(0, 0));  // 10 tokens
  EXPECT_EQ(LastWindows(in, 1, 3)[0], W(0, 1));  // 15
  EXPECT_EQ(LastWindows(in, 1, 8)[0], W(0, 1));  // 40
  EXPECT_EQ(LastWindows(in, 1, 9)[0], W(1, 0));  // 45
  EXPECT_EQ(LastWindows(in, 1, 15)[0], W(2, 0));  // 75: pass 2 gives it block 3 again
  EXPECT_EQ(LastWindows(in, 1, 0)[0], W(UINT64_MAX, UINT64_MAX));
  in.peeks_past_row = true;  // a row ending at a document's end looks one token on
  EXPECT_EQ(LastWindows(in, 1, 2)[0], W(0, 1));
  in.pack = false;  // unpacked rows of records that may hold no id: unknown
  EXPECT_EQ(LastWindows(in, 1, 2)[0], W(UINT64_MAX, UINT64_MAX));
  in.added_per_document = 1;  // with BOS, a row per record
  EXPECT_EQ(LastWindows(in, 1, 2)[0], W(0, 1));
}

}  // namespace
}  // namespace tokenfeed::loader
