// MergeTable: the BPE merge rules, (left id, right id) -> (rank, merged id).
// A flat open-addressing table of 8-byte slots -- the id pair and the rank
// packed into one word, the merged id kept by rank in a side array -- so the
// whole table of a 128K-merge vocabulary is about 1.5 MB and stays in L2.
// Looked up for every adjacent symbol pair the BPE merge loop examines.
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
  static constexpr uint32_t kMaxId = (1u << 21) - 1;    // ids must be below 2^21
  static constexpr uint32_t kMaxRank = (1u << 22) - 2;  // ranks below 2^22 - 1

  MergeTable() = default;

  // `rules[rank]` = {left, right, merged}; a pair that repeats takes its last
  // rank, as in the reference, where a later duplicate merge line replaces
  // the earlier one. Ids and ranks must be within kMaxId / kMaxRank.
  struct Rule {
    uint32_t left, right, merged;
  };
  explicit MergeTable(const std::vector<Rule>& rules) {
    merged_of_rank_.resize(rules.size());
    size_t cap = rules.size() * 10 / 7 + 16;
    slots_.assign(cap, kEmpty);
    for (size_t rank = 0; rank < rules.size(); ++rank) {
      const Rule& r = rules[rank];
      merged_of_rank_[rank] = r.merged;
      uint64_t key = Key(r.left, r.right);
      size_t i = Index(key);
      while (slots_[i] != kEmpty && (slots_[i] & kKeyMask) != key) i = i + 1 == cap ? 0 : i + 1;
      if (slots_[i] == kEmpty) ++size_;
      slots_[i] = key | (uint64_t{rank} << 42);
    }
  }

  // The rule for (left, right), or rank kNoRank when there is none.
  // HOT PATH: one multiply, usually one cache line.
  MergeRule Find(uint32_t left, uint32_t right) const {
    if (slots_.empty()) return {kNoRank, 0};
    const uint64_t key = Key(left, right);
    size_t i = Index(key);
    const size_t cap = slots_.size();
    while (true) {
      const uint64_t s = slots_[i];
      if ((s & kKeyMask) == key) {
        uint32_t rank = static_cast<uint32_t>(s >> 42);
        return {rank, merged_of_rank_[rank]};
      }
      if (s == kEmpty) return {kNoRank, 0};
      i = i + 1 == cap ? 0 : i + 1;
    }
  }

  size_t size() const { return size_; }
  size_t memory_bytes() const { return slots_.size() * 8 + merged_of_rank_.size() * 4; }

 private:
  static constexpr uint64_t kEmpty = UINT64_MAX;  // its key part (all ones) is no valid pair
  static constexpr uint64_t kKeyMask = (uint64_t{1} << 42) - 1;

  static uint64_t Key(uint32_t left, uint32_t right) { return (uint64_t{left} << 21) | right; }
  size_t Index(uint64_t key) const {
    uint64_t h = key * 0x9E3779B97F4A7C15ULL;
    return static_cast<size_t>((static_cast<unsigned __int128>(h) * slots_.size()) >> 64);
  }

  std::vector<uint64_t> slots_;
  std::vector<uint32_t> merged_of_rank_;
  size_t size_ = 0;
};

}  // namespace tokenfeed::tokenizer
