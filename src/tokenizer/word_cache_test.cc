#include "tokenizer/word_cache.h"

#include <map>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tokenfeed::tokenizer {
namespace {

// Words of every cached length (the two-word keys up to 16 bytes, the arena
// above), with one id (kept in the slot) or several (kept in the arena),
// against a std::map; words that differ in one byte must not collide.
TEST(WordCacheTest, FindsWhatWasInsertedAndNothingElse) {
  std::mt19937 rng(3);
  WordCache cache(1 << 12);
  std::map<std::string, std::vector<uint32_t>> want;
  std::vector<std::string> words;
  for (int i = 0; i < 3000; ++i) {
    std::string w(1 + rng() % WordCache::kMaxWordBytes, '\0');
    for (char& c : w) c = static_cast<char>("ab\xE4\xB8"[rng() % 4]);
    if (want.count(w)) continue;
    std::vector<uint32_t> ids(1 + (rng() % 3 == 0 ? rng() % 5 : 0));
    for (uint32_t& id : ids) id = static_cast<uint32_t>(rng());
    cache.Insert(w, WordCache::MakeKey(w), ids);
    want[w] = ids;
    words.push_back(w);
  }
  ASSERT_EQ(cache.size(), want.size());
  for (const auto& [w, ids] : want) {
    std::span<const uint32_t> got;
    ASSERT_TRUE(cache.Find(w, WordCache::MakeKey(w), &got)) << w.size();
    EXPECT_EQ(std::vector<uint32_t>(got.begin(), got.end()), ids);
    for (size_t at : {size_t{0}, w.size() / 2, w.size() - 1}) {
      std::string near = w;
      near[at] = static_cast<char>(near[at] ^ 0x01);
      if (want.count(near)) continue;
      EXPECT_FALSE(cache.Find(near, WordCache::MakeKey(near), &got)) << w.size() << " at " << at;
    }
    std::string longer = w + "a";
    if (!want.count(longer) && longer.size() <= WordCache::kMaxWordBytes) {
      EXPECT_FALSE(cache.Find(longer, WordCache::MakeKey(longer), &got));
    }
  }
}

TEST(WordCacheTest, ClearsWhenFullAndKeepsWorking) {
  WordCache cache(64);
  for (uint32_t i = 0; i < 1000; ++i) {
    const std::string w = "word" + std::to_string(i);
    const uint32_t ids[2] = {i, i + 1};
    cache.Insert(w, WordCache::MakeKey(w), std::span<const uint32_t>(ids, 1 + i % 2));
    std::span<const uint32_t> got;
    ASSERT_TRUE(cache.Find(w, WordCache::MakeKey(w), &got));
    ASSERT_EQ(got.size(), 1 + i % 2);
    EXPECT_EQ(got[0], i);
    EXPECT_LE(cache.size(), 64u);
  }
}

TEST(WordCacheTest, GrowsAsItFillsKeepingEveryWordThenClearsAtItsBound) {
  WordCache cache(100000);
  const size_t first = cache.capacity();
  EXPECT_LT(first, size_t{100000});  // it starts small
  auto word = [](uint32_t i) { return (i % 3 == 0 ? std::string(20 + i % 50, 'x') : "w") + std::to_string(i); };
  for (uint32_t i = 0; i < 100000; ++i) {
    const std::string w = word(i);
    const uint32_t ids[3] = {i, i + 1, i + 2};
    cache.Insert(w, WordCache::MakeKey(w), std::span<const uint32_t>(ids, 1 + i % 3));
  }
  EXPECT_EQ(cache.size(), 100000u);
  EXPECT_GT(cache.capacity(), first);
  EXPECT_GE(cache.capacity() * 3, size_t{100000} * 4);  // at most 3/4 full
  // Every word inserted before and across the growths is still found, with its ids.
  for (uint32_t i = 0; i < 100000; ++i) {
    const std::string w = word(i);
    std::span<const uint32_t> got;
    ASSERT_TRUE(cache.Find(w, WordCache::MakeKey(w), &got)) << w;
    ASSERT_EQ(got.size(), 1 + i % 3) << w;
    EXPECT_EQ(got[0], i);
    EXPECT_EQ(got.back(), i + i % 3);
  }
  // The next word starts again from empty, in the table it has grown to.
  const size_t grown = cache.capacity();
  const std::string w = "one more";
  const uint32_t id = 7;
  cache.Insert(w, WordCache::MakeKey(w), std::span<const uint32_t>(&id, 1));
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.capacity(), grown);
  std::span<const uint32_t> got;
  EXPECT_FALSE(cache.Find(word(5), WordCache::MakeKey(word(5)), &got));
}

}  // namespace
}  // namespace tokenfeed::tokenizer
