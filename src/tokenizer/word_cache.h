// WordCache: remembers the BPE result of recently seen short pieces
// (pre-tokenized words) so that frequent words cost one hash probe instead of
// a merge loop. Memory is bounded: when the table reaches its entry limit it is
// cleared wholesale (cheap, and real text refills the hot words at once).
// Not thread-safe: each encoding thread owns one (inside its EncodeScratch).
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace tokenfeed::tokenizer {

class WordCache {
 public:
  static constexpr size_t kMaxWordBytes = 96;  // longer pieces are not cached

  explicit WordCache(size_t max_entries = 1 << 17) : max_entries_(max_entries) {
    size_t cap = 16;
    while (cap < max_entries * 2) cap <<= 1;
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
    keys_.reserve(max_entries * 8);
    ids_.reserve(max_entries * 3);
  }

  // HOT PATH: one hash of the piece and a short probe run.
  // Returns false when `word` is not cached.
  bool Find(std::string_view word, uint64_t hash, std::span<const uint32_t>* ids) const {
    size_t i = hash & mask_;
    while (true) {
      const Slot& s = slots_[i];
      if (s.key_len == kEmpty) return false;
      if (s.hash == hash && s.key_len == word.size() &&
          std::memcmp(keys_.data() + s.key_offset, word.data(), word.size()) == 0) {
        *ids = std::span<const uint32_t>(ids_.data() + s.ids_offset, s.ids_len);
        return true;
      }
      i = (i + 1) & mask_;
    }
  }

  void Insert(std::string_view word, uint64_t hash, std::span<const uint32_t> ids) {
    if (word.size() > kMaxWordBytes) return;
    if (size_ >= max_entries_) Clear();
    size_t i = hash & mask_;
    while (slots_[i].key_len != kEmpty) i = (i + 1) & mask_;
    slots_[i] = Slot{hash, static_cast<uint32_t>(keys_.size()), static_cast<uint32_t>(word.size()),
                     static_cast<uint32_t>(ids_.size()), static_cast<uint32_t>(ids.size())};
    keys_.append(word);
    ids_.insert(ids_.end(), ids.begin(), ids.end());
    ++size_;
  }

  static uint64_t Hash(std::string_view word) { return XXH3_64bits(word.data(), word.size()); }

  void Clear() {
    for (Slot& s : slots_) s.key_len = kEmpty;
    keys_.clear();
    ids_.clear();
    size_ = 0;
  }

  size_t size() const { return size_; }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  struct Slot {
    uint64_t hash = 0;
    uint32_t key_offset = 0;
    uint32_t key_len = kEmpty;
    uint32_t ids_offset = 0;
    uint32_t ids_len = 0;
  };

  size_t max_entries_;
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
  std::string keys_;
  std::vector<uint32_t> ids_;
};

}  // namespace tokenfeed::tokenizer
