#include "loader/document_order.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <vector>

#include <gtest/gtest.h>

namespace tokenfeed::loader {
namespace {

std::vector<uint32_t> Sorted(std::vector<uint32_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<uint32_t> Iota(uint32_t n) {
  std::vector<uint32_t> v(n);
  std::iota(v.begin(), v.end(), 0u);
  return v;
}

TEST(DocumentOrderTest, BlocksCutEachPartitionWithAShortLastBlock) {
  const std::vector<Block> blocks = MakeBlocks({{0, 10}, {5, 5}, {3, 7}}, 4);
  ASSERT_EQ(blocks.size(), 4u);
  EXPECT_EQ(blocks[0].partition, 0u);
  EXPECT_EQ(blocks[0].offset, 0u);
  EXPECT_EQ(blocks[0].count, 4u);
  EXPECT_EQ(blocks[2].offset, 8u);
  EXPECT_EQ(blocks[2].count, 2u);  // the rest of partition 0
  EXPECT_EQ(blocks[3].partition, 2u);  // partition 1 is empty
  EXPECT_EQ(blocks[3].offset, 3u);
  EXPECT_EQ(blocks[3].count, 4u);
  EXPECT_TRUE(MakeBlocks({}, 4).empty());
  EXPECT_EQ(MakeBlocks({{0, 8}}, 4).size(), 2u);  // an exact multiple leaves no empty block
}

TEST(DocumentOrderTest, AShuffledEpochVisitsEveryBlockExactlyOnce) {
  const std::vector<Block> blocks = MakeBlocks({{0, 1000}, {0, 700}, {100, 130}}, 16);
  for (uint64_t epoch = 0; epoch < 5; ++epoch) {
    const std::vector<uint32_t> order = EpochBlockOrder(blocks, true, 7, 0, epoch);
    EXPECT_EQ(Sorted(order), Iota(static_cast<uint32_t>(blocks.size()))) << "epoch " << epoch;
  }
}

TEST(DocumentOrderTest, TheSameKeyGivesTheSameOrderAndAnyOtherKeyAnother) {
  const std::vector<Block> blocks = MakeBlocks({{0, 4000}, {0, 4000}}, 16);
  const std::vector<uint32_t> first = EpochBlockOrder(blocks, true, 7, 0, 0);
  EXPECT_EQ(EpochBlockOrder(blocks, true, 7, 0, 0), first);
  EXPECT_NE(first, Iota(static_cast<uint32_t>(blocks.size())));
  EXPECT_NE(EpochBlockOrder(blocks, true, 7, 0, 1), first);  // every epoch reshuffles
  EXPECT_NE(EpochBlockOrder(blocks, true, 8, 0, 0), first);  // another seed
  EXPECT_NE(EpochBlockOrder(blocks, true, 7, 1, 0), first);  // another source
}

TEST(DocumentOrderTest, UnshuffledTakesThePartitionsInTurn) {
  // Partition 0 has three blocks, partition 1 one, partition 2 two.
  const std::vector<Block> blocks = MakeBlocks({{0, 12}, {0, 4}, {0, 8}}, 4);
  const std::vector<uint32_t> order = EpochBlockOrder(blocks, false, 7, 0, 3);
  std::vector<std::pair<uint32_t, uint64_t>> visited;
  for (uint32_t i : order) visited.emplace_back(blocks[i].partition, blocks[i].offset);
  EXPECT_EQ(visited, (std::vector<std::pair<uint32_t, uint64_t>>{{0, 0}, {1, 0}, {2, 0}, {0, 4}, {2, 4}, {0, 8}}));
  EXPECT_EQ(EpochBlockOrder(blocks, false, 8, 1, 0), order);  // seed and epoch play no part
}

TEST(DocumentOrderTest, WindowRecordOrderIsAKeyedPermutation) {
  const std::vector<uint32_t> order = WindowRecordOrder(500, true, 7, 0, 0, 3);
  EXPECT_EQ(Sorted(order), Iota(500));
  EXPECT_NE(order, Iota(500));
  EXPECT_EQ(WindowRecordOrder(500, true, 7, 0, 0, 3), order);
  EXPECT_NE(WindowRecordOrder(500, true, 7, 0, 0, 4), order);  // another window
  EXPECT_NE(WindowRecordOrder(500, true, 7, 0, 1, 3), order);  // another epoch
  EXPECT_EQ(WindowRecordOrder(500, false, 7, 0, 0, 3), Iota(500));
  EXPECT_TRUE(WindowRecordOrder(0, true, 7, 0, 0, 0).empty());
}

TEST(KeyedRandomTest, TheSameKeyGivesTheSameSequence) {
  KeyedRandom a(7, 1, 2, 3), b(7, 1, 2, 3);
  std::set<uint64_t> seen;
  for (int i = 0; i < 1000; ++i) {
    const uint64_t x = a.Next();
    EXPECT_EQ(x, b.Next());
    seen.insert(x);
  }
  EXPECT_EQ(seen.size(), 1000u);
  // Each part of the key matters.
  for (KeyedRandom other : {KeyedRandom(8, 1, 2, 3), KeyedRandom(7, 0, 2, 3), KeyedRandom(7, 1, 0, 3),
                            KeyedRandom(7, 1, 2, 0)}) {
    EXPECT_NE(other.Next(), KeyedRandom(7, 1, 2, 3).Next());
  }
}

TEST(KeyedRandomTest, BelowStaysInRangeAndCoversIt) {
  KeyedRandom r(7, 0, 0, 0);
  std::vector<uint32_t> hits(10, 0);
  for (int i = 0; i < 100000; ++i) {
    const uint64_t x = r.Below(10);
    ASSERT_LT(x, 10u);
    ++hits[x];
  }
  for (uint32_t h : hits) {
    EXPECT_GT(h, 9500u);
    EXPECT_LT(h, 10500u);
  }
  EXPECT_EQ(r.Below(1), 0u);
  const uint64_t huge = (uint64_t{1} << 63) + 1;  // where modulo would be biased, Below is not and still fits
  for (int i = 0; i < 100; ++i) EXPECT_LT(r.Below(huge), huge);
}

}  // namespace
}  // namespace tokenfeed::loader
