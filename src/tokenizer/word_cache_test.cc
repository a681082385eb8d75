#include "tokenizer/word_cache.h"

#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/little_endian.h"

namespace tokenfeed::tokenizer {
namespace {

// Words of every cached length (the two-word keys up to 16 bytes, the arena
// above), with one id (kept in the slot) or several (kept in the arena),
// against a std::map; words that differ in one byte must not collide.
TEST(WordCacheTest, FindsWhatWasInsertedAndNothingElse) {
  std::mt19937 rng(3);
  WordCache cache(1 << 14);  // room for all 3000, their bytes and ids included
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

// A key made with bytes readable after the word (the rest of a document)
// equals the key of the word alone, at every length. Up to 16 bytes it
// holds the word's bytes in order and zeros after them, so two words that
// differ in a byte or in length differ in key.
TEST(WordCacheTest, KeyDoesNotDependOnWhatIsReadableAfterTheWord) {
  std::mt19937 rng(5);
  for (int round = 0; round < 100; ++round) {
    std::string text(48, '\0');
    for (char& c : text) c = static_cast<char>(rng() % 3 == 0 ? 0 : rng());
    for (size_t n = 0; n <= 40; ++n) {
      // The word alone in an allocation of its own size: a read past it is
      // a heap overflow under the address sanitizer.
      std::unique_ptr<char[]> exact(new char[n]);
      std::memcpy(exact.get(), text.data(), n);
      const WordCache::Key alone = WordCache::MakeKey(std::string_view(exact.get(), n));
      ASSERT_EQ(alone.len, n);
      if (n <= 16) {
        unsigned char bytes[16] = {};
        std::memcpy(bytes, text.data(), n);
        EXPECT_EQ(alone.w0, LoadLittleEndian<uint64_t>(bytes)) << n;
        EXPECT_EQ(alone.w1, LoadLittleEndian<uint64_t>(bytes + 8)) << n;
      }
      for (bool padded : {false, true}) {
        // Padded: 16 bytes readable from the word's start, whatever follows
        // it (random bytes, zeros among them).
        const WordCache::Key k = WordCache::MakeKey(std::string_view(text.data(), n), padded);
        ASSERT_EQ(k.w0, alone.w0) << n << " " << padded;
        ASSERT_EQ(k.w1, alone.w1) << n << " " << padded;
        ASSERT_EQ(k.hash, alone.hash) << n << " " << padded;
        ASSERT_EQ(k.len, alone.len);
      }
    }
  }
}

TEST(WordCacheTest, SweepsWhenFullAndKeepsWorking) {
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

TEST(WordCacheTest, GrowsAsItFillsKeepingEveryWordThenSweepsAtItsBound) {
  WordCache cache(100000);
  const size_t first = cache.capacity();
  EXPECT_LT(first, size_t{100000});  // it starts small
  auto word = [](uint32_t i) { return (i % 3 == 0 ? std::string(20 + i % 50, 'x') : "w") + std::to_string(i); };
  for (uint32_t i = 0; i < 100000; ++i) {
    const std::string w = word(i);
    const uint32_t ids[3] = {i, i + 1, i + 2};
    cache.Insert(w, WordCache::MakeKey(w), std::span<const uint32_t>(ids, 1 + i % 3));
    // Short probes while it grows: only the last size, the one for the
    // bound, is filled past half.
    if (cache.size() * 2 > cache.capacity()) {
      ASSERT_GE(cache.capacity() * 3, size_t{100000} * 4) << i;
    }
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
  // Every word was found above, so the next word sweeps the full cache to
  // half its bound: the first words in slot order stay, with their ids; the
  // table keeps the size it has grown to.
  const size_t grown = cache.capacity();
  const std::string w = "one more";
  const uint32_t id = 7;
  cache.Insert(w, WordCache::MakeKey(w), std::span<const uint32_t>(&id, 1));
  EXPECT_EQ(cache.sweeps(), 1u);
  EXPECT_EQ(cache.size(), 50000u + 1);
  EXPECT_EQ(cache.capacity(), grown);
  size_t kept = 0;
  for (uint32_t i = 0; i < 100000; ++i) {
    const std::string k = word(i);
    std::span<const uint32_t> got;
    if (!cache.Find(k, WordCache::MakeKey(k), &got)) continue;
    ++kept;
    ASSERT_EQ(got.size(), 1 + i % 3) << k;
    EXPECT_EQ(got[0], i);
    EXPECT_EQ(got.back(), i + i % 3);
  }
  EXPECT_EQ(kept, 50000u);
}

// A sweep keeps exactly the words found since the last one -- short and long
// keys, one id and several -- and drops the words only inserted; a word
// kept by one sweep and not found again is dropped by the next.
TEST(WordCacheTest, ASweepKeepsTheWordsFoundSinceTheLastOne) {
  WordCache cache(64);
  auto word = [](uint32_t i) { return (i % 2 ? std::string(30, 'L') : std::string("s")) + std::to_string(i); };
  auto insert = [&](uint32_t i) {
    const std::string w = word(i);
    const uint32_t ids[3] = {i, i + 100, i + 200};
    cache.Insert(w, WordCache::MakeKey(w), std::span<const uint32_t>(ids, 1 + i % 3));
  };
  auto find = [&](uint32_t i) {
    const std::string w = word(i);
    std::span<const uint32_t> got;
    if (!cache.Find(w, WordCache::MakeKey(w), &got)) return false;
    EXPECT_EQ(got.size(), 1 + i % 3) << w;
    EXPECT_EQ(got[0], i) << w;
    EXPECT_EQ(got.back(), i + 100 * (i % 3)) << w;
    return true;
  };
  for (uint32_t i = 0; i < 64; ++i) insert(i);
  EXPECT_EQ(cache.sweeps(), 0u);
  for (uint32_t i = 0; i < 10; ++i) ASSERT_TRUE(find(i));  // the hot words
  insert(64);  // full: the sweep keeps the ten found
  EXPECT_EQ(cache.sweeps(), 1u);
  EXPECT_EQ(cache.size(), 11u);
  for (uint32_t i = 0; i < 10; ++i) EXPECT_TRUE(find(i)) << i;
  for (uint32_t i = 10; i < 64; ++i) EXPECT_FALSE(find(i)) << i;
  // 0-9 were found again just above, so the next sweep keeps them; after it
  // only 0-4 are found, so the one after that drops 5-9.
  for (uint32_t i = 65; i < 118; ++i) insert(i);  // 11 + 53 = 64: full again
  EXPECT_EQ(cache.size(), 64u);
  insert(118);  // second sweep: 0-9 were found since the first, nothing else
  EXPECT_EQ(cache.sweeps(), 2u);
  EXPECT_EQ(cache.size(), 11u);
  for (uint32_t i = 0; i < 5; ++i) EXPECT_TRUE(find(i)) << i;
  for (uint32_t i = 119; i < 172; ++i) insert(i);
  insert(172);  // third sweep: only 0-4 were found since the second
  EXPECT_EQ(cache.sweeps(), 3u);
  EXPECT_EQ(cache.size(), 6u);
  for (uint32_t i = 0; i < 5; ++i) EXPECT_TRUE(find(i)) << i;
  for (uint32_t i = 5; i < 10; ++i) EXPECT_FALSE(find(i)) << i;
  EXPECT_TRUE(find(172));
}

// Words of the most bytes and tokens a word can have: the arenas never pass
// their budget (so memory stays bounded whatever the text), sweeps come from
// the budget before the entry bound, and every word is found after its
// insert with its ids.
TEST(WordCacheTest, TheArenasStayWithinTheirBudgetForTheLongestWords) {
  WordCache cache(64);
  EXPECT_EQ(cache.arena_budget(), 64 * WordCache::kArenaBytesPerEntry);
  std::vector<uint32_t> ids(WordCache::kMaxWordBytes);
  for (uint32_t i = 0; i < 2000; ++i) {
    std::string w = std::to_string(i);
    w.resize(WordCache::kMaxWordBytes, static_cast<char>('a' + i % 26));
    for (uint32_t j = 0; j < ids.size(); ++j) ids[j] = i * 1000 + j;
    cache.Insert(w, WordCache::MakeKey(w), ids);
    ASSERT_LE(cache.arena_bytes(), cache.arena_budget()) << i;
    std::span<const uint32_t> got;
    ASSERT_TRUE(cache.Find(w, WordCache::MakeKey(w), &got)) << i;
    ASSERT_EQ(std::vector<uint32_t>(got.begin(), got.end()), ids) << i;
  }
  // 96 + 384 bytes a word: four fit the budget of 2,048, so most sweeps
  // came long before 64 words.
  EXPECT_LE(cache.size(), 4u);
  EXPECT_GE(cache.sweeps(), 2000u / 4);
  // A word that would take more than half the budget alone is not cached.
  WordCache tiny(1);
  const std::string w(40, 'x');
  const uint32_t two[2] = {1, 2};
  tiny.Insert(w, WordCache::MakeKey(w), two);
  std::span<const uint32_t> got;
  EXPECT_FALSE(tiny.Find(w, WordCache::MakeKey(w), &got));
  EXPECT_EQ(tiny.arena_bytes(), 0u);
}

// Hot words among a stream of words seen once (the shape of a long run of
// real text): each hot word misses once, however long the stream, where
// emptying the cache at its bound would lose them all at every emptying.
TEST(WordCacheTest, HotWordsOutliveAStreamOfWordsSeenOnce) {
  WordCache cache(256);
  size_t hot_misses = 0;
  for (uint32_t i = 0; i < 20000; ++i) {
    const std::string hot = "hot" + std::to_string(i % 16);
    std::span<const uint32_t> got;
    if (!cache.Find(hot, WordCache::MakeKey(hot), &got)) {
      ++hot_misses;
      const uint32_t id = i % 16;
      cache.Insert(hot, WordCache::MakeKey(hot), std::span<const uint32_t>(&id, 1));
    } else {
      ASSERT_EQ(got.size(), 1u);
      EXPECT_EQ(got[0], i % 16);
    }
    const std::string once = "once" + std::to_string(i);
    const uint32_t id = i;
    cache.Insert(once, WordCache::MakeKey(once), std::span<const uint32_t>(&id, 1));
    ASSERT_LE(cache.size(), 256u);
  }
  EXPECT_EQ(cache.sweeps(), 83u);  // the 16 kept, then 240 words seen once, each time
  EXPECT_EQ(hot_misses, 16u);
}

}  // namespace
}  // namespace tokenfeed::tokenizer
