// Fuzz target: WordCache against its contract, driven by the input bytes.
// The first byte picks the entry bound (1 to 64, 4,096, or 65,536); each
// later pair of bytes is one operation. Most are on one of 256 words
// (lengths 1 to 96 bytes, short and long keys, neighbours that differ in one
// byte or in length), whose ids are a fixed function of the word:
//   insert: then the word must be found at once with its ids (unless it is
//           one the cache declines: too large for a tiny bound);
//   find:   a hit must give exactly the word's ids.
// Bit 1 of an operation's first byte makes the word's key with bytes after
// it readable (WordCache::MakeKey's padded form), which must be the same
// key: a word just inserted is found with the key made either way.
// With a bound of 4,096 or more, an operation whose first byte is 0xF0 or
// more is a bulk insert instead (at most 32 an input): 4,096 words of a
// second family, from word 256 * b on, b being the first byte's low four
// bits and the second byte (words of 5 to 48 bytes). Each is checked as an
// insert is; after the bulk each found has its ids, and without a sweep
// during the bulk every one is found (only sweeps drop words). At the bound
// of 65,536 the table grows past 16,384 words (the 256 words alone never
// make it), so growth is exercised too; at both bounds, sweeps of a large
// table.
// After every operation the size and the arenas stay within their bounds.
// Aborts on the first violation.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/word_cache.h"

namespace {

using tokenfeed::tokenizer::WordCache;

std::string WordOf(uint8_t w) {
  // Length 1-96; the low bits vary the bytes so that neighbours collide in
  // their first or last machine word.
  const size_t len = 1 + (static_cast<size_t>(w) * 37) % WordCache::kMaxWordBytes;
  std::string s(len, static_cast<char>('a' + w % 7));
  s[len / 2] = static_cast<char>(w);
  if (len > 8) s[len - 1] = static_cast<char>(w >> 3);
  return s;
}

std::vector<uint32_t> IdsOf(uint8_t w) {
  std::vector<uint32_t> ids(1 + (w % 5 == 0 ? w % 97 : w % 3));
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<uint32_t>(w) * 1000 + static_cast<uint32_t>(i);
  if (ids.size() > WordOf(w).size()) ids.resize(WordOf(w).size());  // a token has at least one byte
  return ids;
}

// The bulk family: word `i` (below 2^24) starts with byte 1 followed by its
// index, so it equals no word of WordOf (those of 5 bytes or more start with
// a letter). Most fit a slot (16 bytes or fewer, one id); every eighth is a
// long key, every fifth has several ids.
std::string BulkWordOf(uint32_t i) {
  const size_t len = i % 8 == 7 ? 17 + i % 32 : 5 + i % 12;
  std::string s(len, static_cast<char>('k' + i % 11));
  s[0] = 1;
  s[1] = static_cast<char>(i >> 16);
  s[2] = static_cast<char>(i >> 8);
  s[3] = static_cast<char>(i);
  return s;
}

std::vector<uint32_t> BulkIdsOf(uint32_t i) {
  std::vector<uint32_t> ids(i % 5 == 0 ? 2 + i % 3 : 1);
  for (size_t k = 0; k < ids.size(); ++k) ids[k] = i * 7 + static_cast<uint32_t>(k);
  return ids;
}

[[noreturn]] void Fail(const char* what, uint32_t w) {
  std::fprintf(stderr, "word cache: %s (word %u)\n", what, static_cast<unsigned>(w));
  std::abort();
}

constexpr uint32_t kBulkWords = 4096;
constexpr int kMaxBulks = 32;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t bound = data[0] == 255 ? 4096 : data[0] == 254 ? 65536 : 1 + data[0] % 64;
  WordCache cache(bound);
  auto same = [](std::span<const uint32_t> a, const std::vector<uint32_t>& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
  };
  auto within_bounds = [&](uint32_t w) {
    if (cache.size() > bound) Fail("more words than the bound", w);
    if (cache.arena_bytes() > cache.arena_budget()) Fail("arenas past their budget", w);
  };
  int bulks = 0;
  std::vector<uint32_t> unswept;  // the first words of the bulks since the last sweep
  uint64_t unswept_sweeps = 0;    // the sweeps when it was last brought up to date
  size_t checked_capacity = cache.capacity();  // the table's size at the last check
  for (size_t at = 1; at + 1 < size; at += 2) {
    if (bound >= kBulkWords && data[at] >= 0xF0 && bulks < kMaxBulks) {
      ++bulks;
      if (cache.sweeps() != unswept_sweeps) unswept.clear();  // a single insert swept
      const uint64_t sweeps_before = cache.sweeps();
      const uint32_t first = ((static_cast<uint32_t>(data[at] & 0x0F) << 8) | data[at + 1]) * 256;
      std::span<const uint32_t> got;
      for (uint32_t i = first; i < first + kBulkWords; ++i) {
        const std::string word = BulkWordOf(i);
        const std::vector<uint32_t> ids = BulkIdsOf(i);
        const WordCache::Key key = WordCache::MakeKey(word);
        const bool hit = cache.Find(word, key, &got);
        if (hit && !same(got, ids)) Fail("bulk word found with other ids", i);
        if (!hit) {
          cache.Insert(word, key, ids);
          if (WordCache::ArenaBytesOf(word.size(), ids.size()) <= cache.arena_budget() / 2) {
            if (!cache.Find(word, key, &got)) Fail("bulk word not found after its insert", i);
            if (!same(got, ids)) Fail("bulk word found with other ids after its insert", i);
          }
        }
        within_bounds(i);
      }
      // Only a sweep drops words: the bulks since the last one must all be
      // found, with their ids. After a growth (here or in a single insert
      // since) every one is checked, as the table moved them all; else this
      // bulk's.
      if (cache.sweeps() != sweeps_before) {
        unswept.clear();
      } else {
        unswept.push_back(first);
      }
      unswept_sweeps = cache.sweeps();
      const bool grew = cache.capacity() != checked_capacity;  // in this bulk or a single insert
      checked_capacity = cache.capacity();
      for (size_t b = grew || unswept.empty() ? 0 : unswept.size() - 1; b < unswept.size(); ++b) {
        for (uint32_t i = unswept[b]; i < unswept[b] + kBulkWords; ++i) {
          const std::string word = BulkWordOf(i);
          if (!cache.Find(word, WordCache::MakeKey(word), &got)) Fail("bulk word lost without a sweep", i);
          if (!same(got, BulkIdsOf(i))) Fail("bulk word found with other ids after the bulk", i);
        }
      }
      continue;
    }
    const bool insert = data[at] & 1;
    const uint8_t w = data[at + 1];
    const std::string word = WordOf(w);
    const std::vector<uint32_t> ids = IdsOf(w);
    // The key from the word alone, or (bit 1) read on into 16 bytes after
    // it, as for a piece of a document, bytes that vary by operation.
    const std::string padded = word + std::string(16, static_cast<char>(data[at] ^ data[at + 1]));
    const WordCache::Key alone = WordCache::MakeKey(word);
    const WordCache::Key read_on = WordCache::MakeKey(std::string_view(padded.data(), word.size()), true);
    const WordCache::Key& key = (data[at] & 2) ? read_on : alone;
    std::span<const uint32_t> got;
    const bool hit = cache.Find(word, key, &got);
    if (hit && !same(got, ids)) Fail("found with other ids", w);
    if (insert && !hit) {  // as the encoder does: a word is inserted after a miss
      cache.Insert(word, key, ids);
      if (WordCache::ArenaBytesOf(word.size(), ids.size()) <= cache.arena_budget() / 2) {
        if (!cache.Find(word, key, &got)) Fail("not found after its insert", w);
        if (!same(got, ids)) Fail("found with other ids after its insert", w);
        if (!cache.Find(word, &key == &alone ? read_on : alone, &got)) {
          Fail("not found after its insert by the key made the other way", w);
        }
      }
    }
    within_bounds(w);
  }
  return 0;
}
