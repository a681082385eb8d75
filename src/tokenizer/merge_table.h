// MergeTable: the BPE merge rules, (left id, right id) -> (rank, merged id).
// Open addressing over groups of 16 slots: a one-byte tag per slot (eight
// bits of the hash; 0 marks an empty slot) sits in its own array, so a probe
// compares a whole group's tags at once and reads an 8-byte slot (the id pair
// and the rank packed into one word) only where a tag matches. Most pairs the
// merge loops ask about have no rule, and such a probe usually ends after one
// 16-byte tag load. The merged id is kept by rank in a side array, or, when
// every rule's merged id is its rank plus one constant (vocabularies numbered
// in merge order, as DeepSeek-V3's and Qwen's are), computed from the rank
// without a memory access.
// Built once at load time; lookups are const and safe from any thread.
#pragma once

#include <cstdint>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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
    // At most 3/4 full, so nearly every group keeps an empty slot and a probe
    // for a missing pair stops in its first group.
    groups_ = rules.size() / 12 + 1;
    tags_.assign(groups_ * kGroup, kEmptyTag);
    slots_.assign(groups_ * kGroup, 0);
    for (size_t rank = 0; rank < rules.size(); ++rank) {
      const Rule& r = rules[rank];
      merged_of_rank_[rank] = r.merged;
      const int64_t delta = int64_t{r.merged} - static_cast<int64_t>(rank);
      if (rank == 0) merged_minus_rank_ = delta;
      ranks_number_merges_ = ranks_number_merges_ && delta == merged_minus_rank_;
      const uint64_t key = Key(r.left, r.right);
      const uint64_t word = key | (uint64_t{rank} << 42);
      const size_t at = FindSlot(key);
      if (at != kNoSlot) {
        slots_[at] = word;
        continue;
      }
      const uint64_t h = Hash(key);
      for (size_t g = GroupOf(h);; g = g + 1 == groups_ ? 0 : g + 1) {
        const uint32_t empty = MatchTag(tags_.data() + g * kGroup, kEmptyTag);
        if (empty == 0) continue;
        const size_t i = g * kGroup + static_cast<size_t>(__builtin_ctz(empty));
        tags_[i] = TagOf(h);
        slots_[i] = word;
        ++size_;
        break;
      }
    }
    // The side array is needed only when the ranks do not give the ids.
    if (ranks_number_merges_) std::vector<uint32_t>().swap(merged_of_rank_);
  }

  // The rule for (left, right), or rank kNoRank when there is none.
  // HOT PATH: one multiply and one 16-byte tag compare for most pairs.
  MergeRule Find(uint32_t left, uint32_t right) const {
    if (groups_ == 0) return {kNoRank, 0};
    const size_t at = FindSlot(Key(left, right));
    if (at == kNoSlot) return {kNoRank, 0};
    const uint32_t rank = static_cast<uint32_t>(slots_[at] >> 42);
    return {rank, MergedOf(rank)};
  }

  // The rank alone (kNoRank when there is no rule), and the merged id of a
  // rank: the merge loops look up every neighbouring pair but need the
  // merged id only of the pairs they merge.
  uint32_t FindRank(uint32_t left, uint32_t right) const {
    if (groups_ == 0) return kNoRank;
    const size_t at = FindSlot(Key(left, right));
    return at == kNoSlot ? kNoRank : static_cast<uint32_t>(slots_[at] >> 42);
  }
  // HOT PATH: the merge loops take one per merge, right after choosing it.
  uint32_t MergedOf(uint32_t rank) const {
    return ranks_number_merges_ ? static_cast<uint32_t>(rank + merged_minus_rank_) : merged_of_rank_[rank];
  }

  size_t size() const { return size_; }
  size_t memory_bytes() const { return slots_.size() * 9 + merged_of_rank_.size() * 4; }

 private:
  static constexpr size_t kGroup = 16;
  static constexpr uint8_t kEmptyTag = 0;
  static constexpr size_t kNoSlot = SIZE_MAX;
  static constexpr uint64_t kKeyMask = (uint64_t{1} << 42) - 1;
  __extension__ using Wide = unsigned __int128;

  static uint64_t Key(uint32_t left, uint32_t right) { return (uint64_t{left} << 21) | right; }
  static uint64_t Hash(uint64_t key) { return key * 0x9E3779B97F4A7C15ULL; }
  // The group from the hash's top bits, the tag from bits the group does not use.
  size_t GroupOf(uint64_t h) const { return static_cast<size_t>((static_cast<Wide>(h) * groups_) >> 64); }
  static uint8_t TagOf(uint64_t h) {
    const uint8_t t = static_cast<uint8_t>(h >> 24);
    return t == kEmptyTag ? 1 : t;
  }

  // Bit i set when tags[i] == tag.
  static uint32_t MatchTag(const uint8_t* tags, uint8_t tag) {
#if defined(__SSE2__)
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(tags));
    return static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(static_cast<char>(tag)))));
#else
    uint32_t m = 0;
    for (size_t i = 0; i < kGroup; ++i) m |= uint32_t{tags[i] == tag} << i;
    return m;
#endif
  }

  // The slot that holds `key`, or kNoSlot. The probe walks groups from the
  // key's own and stops at the first group with an empty slot: insertion
  // fills the first such group, and nothing is ever removed.
  size_t FindSlot(uint64_t key) const {
    const uint64_t h = Hash(key);
    const uint8_t tag = TagOf(h);
    size_t g = GroupOf(h);
    while (true) {
      const uint8_t* tags = tags_.data() + g * kGroup;
      for (uint32_t m = MatchTag(tags, tag); m != 0; m &= m - 1) {
        const size_t i = g * kGroup + static_cast<size_t>(__builtin_ctz(m));
        if ((slots_[i] & kKeyMask) == key) return i;
      }
      if (MatchTag(tags, kEmptyTag) != 0) return kNoSlot;
      g = g + 1 == groups_ ? 0 : g + 1;
    }
  }

  std::vector<uint8_t> tags_;     // by slot; kEmptyTag where the slot is free
  std::vector<uint64_t> slots_;   // by slot: key | rank << 42
  std::vector<uint32_t> merged_of_rank_;
  // True when every rule's merged id is its rank + merged_minus_rank_
  // (merged_of_rank_ is then empty).
  bool ranks_number_merges_ = true;
  int64_t merged_minus_rank_ = 0;
  size_t groups_ = 0;
  size_t size_ = 0;
};

}  // namespace tokenfeed::tokenizer
