// MergeBoundaries: for two adjacent characters, whether any merge rule of a
// byte-level BPE model could ever join a symbol ending with the first to a
// symbol starting with the second. Where none can, no merge spans that
// boundary in any piece, so BPE of the piece is BPE of each side: the word
// cache then serves the parts (CJK text has no spaces, and its pre-tokenized
// pieces are whole phrases that rarely repeat, while their words do).
// Not the merge loop, and no judgement of whether such a merge would win.
// Immutable after Build: CanJoin may run on many threads at once.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "tokenizer/merge_table.h"

namespace tokenfeed::tokenizer {

class MergeBoundaries {
 public:
  // `rules[rank]` as given to MergeTable; `token_bytes(id)` the bytes of a
  // token. The model's initial symbols must be its pieces' bytes (no
  // continuing-subword prefix or end-of-word suffix).
  static std::unique_ptr<MergeBoundaries> Build(const std::vector<MergeTable::Rule>& rules,
                                                const std::function<std::string_view(uint32_t)>& token_bytes);

  // False only when no rule can join across the boundary between `left` and
  // `right`, whatever surrounds them. Always true for a character outside
  // the Basic Multilingual Plane (not tabulated).
  // HOT PATH for CJK text: two table loads, and a probe of a hash table for
  // the pairs that neither table settles.
  bool CanJoin(char32_t left, char32_t right) const {
    if ((left | right) >= 0x10000) return true;
    const uint32_t l = left_class_[left], r = right_class_[right];
    if (l != 0 && r != 0 && partial_[l * right_classes_ + r]) return true;
    return whole_.Find(left, right).rank != MergeTable::kNoRank;
  }

  // CanJoin answered from `right` alone when few characters (up to
  // kFewJoiners) can be joined to it from the left -- Llama-2's and Gemma 3's
  // ▁, which follows almost nothing inside a token: 1 (joins) or 0 (does
  // not); -1 when many can, and only CanJoin knows. A table load.
  static constexpr size_t kFewJoiners = 3;
  int QuickCanJoin(char32_t left, char32_t right) const {
    if (right >= 0x10000) return -1;
    const uint16_t slot = joiner_slot_[right];
    if (slot == kManyJoiners) return -1;
    const std::array<char32_t, kFewJoiners>& few = few_joiners_[slot];
    return static_cast<int>(left == few[0]) | static_cast<int>(left == few[1]) | static_cast<int>(left == few[2]);
  }

  size_t whole_pairs() const { return whole_.size(); }
  size_t memory_bytes() const;

 private:
  MergeBoundaries() = default;

  // Rules whose two sides meet there as whole characters: (last code point
  // of the left side, first code point of the right side).
  MergeTable whole_;
  // Rules where a partial character meets the boundary. A character's left
  // class stands for the set of its endings (a proper tail of its
  // continuation bytes, or all of it) that end the left side of such a rule;
  // its right class for its beginnings that start the right side of one.
  // Class 0: none. partial_[left class * right_classes_ + right class] says
  // whether some rule pairs one of the endings with one of the beginnings.
  std::vector<uint16_t> left_class_;   // by code point, U+0000..U+FFFF
  std::vector<uint16_t> right_class_;  // by code point
  std::vector<uint8_t> partial_;
  uint32_t right_classes_ = 0;
  // By code point: the index in few_joiners_ of the characters a rule can
  // join to it from the left (slot 0: none), or kManyJoiners.
  static constexpr uint16_t kManyJoiners = UINT16_MAX;
  std::vector<uint16_t> joiner_slot_;
  std::vector<std::array<char32_t, kFewJoiners>> few_joiners_;  // unused places hold 0x110000
};

}  // namespace tokenfeed::tokenizer
