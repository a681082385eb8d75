#include "text/content_dedup.h"

#include <gtest/gtest.h>

#include <string>

namespace tokenfeed::text {
namespace {

TEST(ContentDedupTest, SecondCopyIsADuplicate) {
  DedupSet set;
  EXPECT_TRUE(set.Admit(HashContent("alpha")));
  EXPECT_TRUE(set.Admit(HashContent("beta")));
  EXPECT_FALSE(set.Admit(HashContent("alpha")));
  EXPECT_TRUE(set.Contains(HashContent("beta")));
  EXPECT_FALSE(set.Contains(HashContent("gamma")));
  EXPECT_EQ(set.size(), 2u);
}

TEST(ContentDedupTest, HashIsXxh3OfTheBytes) {
  EXPECT_EQ(HashContent("same"), HashContent(std::string("same")));
  EXPECT_FALSE(HashContent("a") == HashContent("b"));
  EXPECT_FALSE(HashContent("") == ContentHash{});  // the empty text is an ordinary hash
}

TEST(ContentDedupTest, GrowsAndRemembersEveryHash) {
  DedupSet set;
  const int n = 200000;
  for (int i = 0; i < n; ++i) ASSERT_TRUE(set.Admit(HashContent("doc " + std::to_string(i))));
  for (int i = 0; i < n; i += 7) ASSERT_FALSE(set.Admit(HashContent("doc " + std::to_string(i))));
  EXPECT_EQ(set.size(), static_cast<size_t>(n));
  // 16-byte slots, at most 3/4 full after a doubling: between 16/0.75 and 2 * 16/0.75 bytes each.
  EXPECT_GE(set.memory_bytes(), n * 16u * 4 / 3);
  EXPECT_LE(set.memory_bytes(), n * 16u * 8 / 3 + 16u * 1024);
  EXPECT_FALSE(set.saturated());
}

TEST(ContentDedupTest, MemoryBoundStopsRememberingNotDeduplicating) {
  DedupSet set(16 * 1024 * 4);  // 4096 slots
  int remembered_dups = 0;
  for (int i = 0; i < 10000; ++i) set.Admit(HashContent(std::to_string(i)));
  EXPECT_TRUE(set.saturated());
  EXPECT_LE(set.memory_bytes(), 16u * 1024 * 4);
  EXPECT_EQ(set.size() + set.unremembered(), 10000u);
  for (int i = 0; i < 10000; ++i) remembered_dups += !set.Admit(HashContent(std::to_string(i)));
  EXPECT_EQ(static_cast<size_t>(remembered_dups), set.size());  // early ones are still caught
}

TEST(ContentDedupTest, AllZeroHashIsHandled) {
  DedupSet set;
  ContentHash zero{};
  EXPECT_FALSE(set.Contains(zero));
  EXPECT_TRUE(set.Admit(zero));
  EXPECT_FALSE(set.Admit(zero));
  EXPECT_TRUE(set.Contains(zero));
}

}  // namespace
}  // namespace tokenfeed::text
