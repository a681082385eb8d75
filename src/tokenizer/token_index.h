// TokenIndex: byte string -> token id for a vocabulary, in one flat
// open-addressing table whose keys live in a single arena (no per-token heap
// objects). Used for whole-word lookups (ignore_merges) and at load time.
// Built once; lookups are const and safe from any thread.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace tokenfeed::tokenizer {

class TokenIndex {
 public:
  // Adds `bytes` -> `id`; returns false (and changes nothing) if `bytes` is
  // already present.
  bool Insert(std::string_view bytes, uint32_t id) {
    if ((size_ + 1) * 2 > slots_.size()) Grow();
    uint64_t h = XXH3_64bits(bytes.data(), bytes.size());
    size_t i = h & mask_;
    while (slots_[i].len != kEmptyLen) {
      if (slots_[i].hash == h && KeyAt(slots_[i]) == bytes) return false;
      i = (i + 1) & mask_;
    }
    slots_[i] = Slot{h, static_cast<uint32_t>(arena_.size()), static_cast<uint32_t>(bytes.size()), id};
    arena_.append(bytes);
    ++size_;
    return true;
  }

  // HOT PATH for tokenizers with ignore_merges: one hash and one probe run.
  std::optional<uint32_t> Find(std::string_view bytes) const {
    if (slots_.empty()) return std::nullopt;
    uint64_t h = XXH3_64bits(bytes.data(), bytes.size());
    size_t i = h & mask_;
    while (true) {
      const Slot& s = slots_[i];
      if (s.len == kEmptyLen) return std::nullopt;
      if (s.hash == h && s.len == bytes.size() && std::memcmp(arena_.data() + s.offset, bytes.data(), s.len) == 0) {
        return s.id;
      }
      i = (i + 1) & mask_;
    }
  }

  size_t size() const { return size_; }
  size_t memory_bytes() const { return slots_.size() * sizeof(Slot) + arena_.capacity(); }

 private:
  static constexpr uint32_t kEmptyLen = UINT32_MAX;
  struct Slot {
    uint64_t hash = 0;
    uint32_t offset = 0;
    uint32_t len = kEmptyLen;
    uint32_t id = 0;
  };

  std::string_view KeyAt(const Slot& s) const { return std::string_view(arena_.data() + s.offset, s.len); }

  void Grow() {
    size_t cap = slots_.empty() ? 1024 : slots_.size() * 2;
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
    for (const Slot& s : old) {
      if (s.len == kEmptyLen) continue;
      size_t i = s.hash & mask_;
      while (slots_[i].len != kEmptyLen) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }

  std::vector<Slot> slots_;
  std::string arena_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace tokenfeed::tokenizer
