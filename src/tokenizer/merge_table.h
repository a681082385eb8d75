// MergeTable: the BPE merge rules, (left id, right id) -> (rank, merged id),
// in a flat open-addressing table keyed by the id pair. Looked up once per
// adjacent symbol pair in the BPE hot loop, so it is a single probe sequence
// over 16-byte slots with no pointers.
// Built once at load time; lookups are const and safe from any thread.
#pragma once

#include <cstdint>
#include <vector>

namespace tokenfeed::tokenizer {

struct MergeRule {
  uint32_t rank;
  uint32_t merged_id;
};

class MergeTable {
 public:
  static constexpr uint32_t kNoRank = UINT32_MAX;

  MergeTable() = default;
  explicit MergeTable(size_t expected_rules) { Reserve(expected_rules); }

  // Adds a rule; a pair seen before takes the new rule, as in the reference,
  // where a later duplicate merge line replaces the earlier one.
  void Insert(uint32_t left, uint32_t right, MergeRule rule) {
    if ((size_ + 1) * 2 > slots_.size()) Reserve(slots_.empty() ? 16 : slots_.size());
    uint64_t key = Key(left, right);
    size_t i = Hash(key) & mask_;
    while (slots_[i].key != kEmpty) {
      if (slots_[i].key == key) {
        slots_[i].rule = rule;
        return;
      }
      i = (i + 1) & mask_;
    }
    slots_[i] = Slot{key, rule};
    ++size_;
  }

  // The rule for (left, right), or rank kNoRank when there is none.
  // HOT PATH: called for every adjacent pair the BPE merge loop examines.
  MergeRule Find(uint32_t left, uint32_t right) const {
    if (slots_.empty()) return {kNoRank, 0};
    uint64_t key = Key(left, right);
    size_t i = Hash(key) & mask_;
    while (true) {
      const Slot& s = slots_[i];
      if (s.key == key) return s.rule;
      if (s.key == kEmpty) return {kNoRank, 0};
      i = (i + 1) & mask_;
    }
  }

  size_t size() const { return size_; }
  size_t memory_bytes() const { return slots_.size() * sizeof(Slot); }

 private:
  static constexpr uint64_t kEmpty = UINT64_MAX;
  struct Slot {
    uint64_t key = kEmpty;
    MergeRule rule{};
  };

  static uint64_t Key(uint32_t left, uint32_t right) { return (uint64_t{left} << 32) | right; }
  static uint64_t Hash(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return k;
  }

  void Reserve(size_t rules) {
    size_t cap = 16;
    while (cap < rules * 2) cap <<= 1;
    if (cap <= slots_.size()) return;
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
    size_ = 0;
    for (const Slot& s : old) {
      if (s.key == kEmpty) continue;
      size_t i = Hash(s.key) & mask_;
      while (slots_[i].key != kEmpty) i = (i + 1) & mask_;
      slots_[i] = s;
      ++size_;
    }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace tokenfeed::tokenizer
