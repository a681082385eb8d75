#include "loader/sharded_end.h"

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

TEST(ShardedEndTest, TheShardThatOwesMostSamplesEndsTheRound) {
  // Shard 0 holds blocks 0 and 2 (20 tokens: 4 samples), shard 1 blocks 1
  // and 3 (40: 8). Shard 1's 8th sample is global sample 7 * 2 + 1.
  ShardedEnd end = ComputeShardedEnd(OneSource({10, 10, 10, 30}, 2, 1));
  EXPECT_EQ(end.samples, 16u);
  EXPECT_EQ(end.shard, 1u);
  EXPECT_EQ(end.source, 0u);
}

TEST(ShardedEndTest, AShardOwesTheWholeWindowThatHoldsItsLastBlock) {
  // Windows of 4 of a shard's blocks: shard 1's first window is positions
  // 1, 3, 5, 7, half of them in the second pass: 80 tokens, 16 samples.
  ShardedEnd end = ComputeShardedEnd(OneSource({10, 10, 10, 30}, 2, 4));
  EXPECT_EQ(end.samples, 32u);
  EXPECT_EQ(end.shard, 1u);
}

TEST(ShardedEndTest, PassesBosEosAndUnpackedRowsCount) {
  ShardedEndInput in = OneSource({10, 10, 10, 30}, 2, 1);
  in.passes = 2;  // shard 1: blocks 1, 3, 1, 3: 80 tokens, 16 samples
  EXPECT_EQ(ComputeShardedEnd(in).samples, 32u);
  in.passes = 1;
  in.added_per_document = 2;  // shard 1: 40 + 2 * 2 tokens, 9 samples
  EXPECT_EQ(ComputeShardedEnd(in).samples, 8u * 2 + 1 + 1);
  in.pack = false;  // a row per document: 2 per shard
  EXPECT_EQ(ComputeShardedEnd(in).samples, 1u * 2 + 1 + 1);
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
  ShardedEnd end = ComputeShardedEnd(in);
  EXPECT_EQ(end.samples, 32u);
  EXPECT_EQ(end.source, 1u);
  in.weights = {1, 0};  // a source of weight 0 owes nothing
  EXPECT_EQ(ComputeShardedEnd(in).samples, 4u);
}

}  // namespace
}  // namespace tokenfeed::loader
