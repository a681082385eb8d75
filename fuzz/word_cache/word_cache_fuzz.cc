// Fuzz target: WordCache against its contract, driven by the input bytes.
// The first byte picks the entry bound (1 to 64, or 4,096: growth and sweeps
// at every size); each later pair of bytes is one operation on one of 256
// words (lengths 1 to 96 bytes, short and long keys, neighbours that differ
// in one byte or in length), whose ids are a fixed function of the word:
//   insert: then the word must be found at once with its ids (unless it is
//           one the cache declines: too large for a tiny bound);
//   find:   a hit must give exactly the word's ids.
// After every operation the size and the arenas stay within their bounds.
// Aborts on the first violation.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
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

[[noreturn]] void Fail(const char* what, uint8_t w) {
  std::fprintf(stderr, "word cache: %s (word %u)\n", what, static_cast<unsigned>(w));
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t bound = data[0] == 255 ? 4096 : 1 + data[0] % 64;
  WordCache cache(bound);
  auto same = [](std::span<const uint32_t> a, const std::vector<uint32_t>& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
  };
  for (size_t at = 1; at + 1 < size; at += 2) {
    const bool insert = data[at] & 1;
    const uint8_t w = data[at + 1];
    const std::string word = WordOf(w);
    const std::vector<uint32_t> ids = IdsOf(w);
    const WordCache::Key key = WordCache::MakeKey(word);
    std::span<const uint32_t> got;
    const bool hit = cache.Find(word, key, &got);
    if (hit && !same(got, ids)) Fail("found with other ids", w);
    if (insert && !hit) {  // as the encoder does: a word is inserted after a miss
      cache.Insert(word, key, ids);
      if (WordCache::ArenaBytesOf(word.size(), ids.size()) <= cache.arena_budget() / 2) {
        if (!cache.Find(word, key, &got)) Fail("not found after its insert", w);
        if (!same(got, ids)) Fail("found with other ids after its insert", w);
      }
    }
    if (cache.size() > bound) Fail("more words than the bound", w);
    if (cache.arena_bytes() > cache.arena_budget()) Fail("arenas past their budget", w);
  }
  return 0;
}
