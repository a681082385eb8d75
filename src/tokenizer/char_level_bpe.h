// CharLevelBpe: an exact shortcut for BPE on pieces with multi-byte UTF-8
// characters. Byte-level BPE spends most of its merges rebuilding each
// character from its bytes (3 bytes -> 1 token for CJK). When those
// inner merges provably cannot interact with the neighbours, the result is the
// same as starting from each character's own tokens, provided each token is
// given the "birth time" at which the byte-level run would have completed it:
// a merge becomes due at the later of its own (rank, position) and the births
// of its two sides. A merge rule whose result is neither inside one character
// nor a join of whole characters ("crossing", e.g. "ー" + the first two bytes
// of the next katakana) can break that independence; a piece in which such a
// rule could apply between two neighbouring characters is left to the
// byte-level loop. docs/tokenizer.md has the argument in full.
// Immutable after Build: Encode may run on many threads at once.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <memory>
#include <string_view>
#include <vector>

#include "tokenizer/merge_table.h"

namespace tokenfeed::tokenizer {

class CharLevelBpe {
 public:
  // `rules[rank]` as given to MergeTable; `token_bytes(id)` the bytes of a
  // token; `byte_ids[b]` the id of the single byte b (all must exist).
  static std::unique_ptr<CharLevelBpe> Build(const std::vector<MergeTable::Rule>& rules, const MergeTable& merges,
                                             const int64_t* byte_ids, uint32_t id_limit,
                                             const std::function<std::string_view(uint32_t)>& token_bytes);

  // Appends the ids of `piece` and returns true, or returns false (appending
  // nothing) when the shortcut does not apply and the byte-level loop must run.
  // HOT PATH for non-ASCII text.
  // `merges` is the table Build was given (the model owns it; this class
  // keeps no pointer to it, so the model stays freely movable).
  bool Encode(std::string_view piece, const MergeTable& merges, std::vector<uint32_t>* out) const;

  // Appends the tokens byte-level BPE gives the one character at `p`
  // (`len` bytes, 1 to 3) on its own, and returns true; false (appending
  // nothing) for a character the table does not hold.
  bool AppendCharTokens(const unsigned char* p, size_t len, std::vector<uint32_t>* out) const {
    const CharInfo* info = Lookup(p, len);
    if (info == nullptr) return false;
    out->insert(out->end(), info->syms, info->syms + info->nsyms);
    return true;
  }

  size_t crossing_rules() const { return crossing_count_; }

 private:
  // A symbol that can sit at a character's edge and is an operand of a
  // crossing rule, with the rank of the merge that consumes it inside the
  // character (UINT32_MAX: it survives). A crossing rule of a higher rank
  // comes too late to involve it.
  struct Edge {
    uint32_t id;
    uint32_t death;
  };
  struct CharInfo {
    uint32_t syms[4];
    uint32_t birth = 0;   // packed (rank + 1) << 8 | offset in the character: when its token is complete
    uint32_t suf_begin = 0;  // edges_[suf_begin, suf_begin + nsuf): symbols ending the character
    uint32_t pre_begin = 0;  // edges_[pre_begin, pre_begin + npre): symbols starting it
    uint16_t nsuf = 0;
    uint16_t npre = 0;
    uint8_t nsyms = 0;   // 0: not usable (a surrogate)
    // One bit (RuleBit) for each crossing rule that could take an edge
    // symbol of this side while it lives: when the left character's suffix
    // bits and the right one's prefix bits share none, Dangerous is false.
    uint32_t suf_rules = 0;
    uint32_t pre_rules = 0;
  };
  static uint32_t RuleBit(uint32_t rank) { return 1u << ((rank * 0x9E3779B1u) >> 27); }

  CharLevelBpe() = default;
  // `extra_suf` / `extra_pre`: crossing-rule operands made of whole
  // characters that end / start with this character.
  void ComputeInfo(const MergeTable& merges, const unsigned char* bytes, size_t len,
                   const std::vector<uint32_t>& extra_suf, const std::vector<uint32_t>& extra_pre, CharInfo* info);
  const CharInfo* Lookup(const unsigned char* p, size_t len) const;
  bool Dangerous(const CharInfo& left, const CharInfo& right) const;
  // A crossing rule with a live edge symbol of `info` on one side and, on the
  // other, a token whose bytes are those of `text` next to the edge: for a
  // neighbour whose own merges cannot be predicted.
  bool DangerousAfter(std::string_view before, const CharInfo& info) const;
  bool DangerousBefore(const CharInfo& info, std::string_view after) const;

  int64_t byte_ids_[256];
  std::vector<uint8_t> cross_left_;   // by id: operand on the left of a crossing rule
  std::vector<uint8_t> cross_right_;  // by id: operand on the right of a crossing rule
  MergeTable crossing_;               // the crossing rules themselves
  size_t crossing_count_ = 0;
  std::vector<CharInfo> bmp_;         // U+0000..U+FFFF, indexed by code point
  std::vector<Edge> edges_;           // the edge lists of all characters
  // Crossing rules by operand: for each right operand, its left partners'
  // bytes and the rule's rank; for each left operand, its right partners'.
  struct Partner {
    std::string bytes;
    uint32_t id;    // the other operand
    uint32_t rank;
  };
  std::vector<std::vector<Partner>> lefts_of_right_;
  std::vector<std::vector<Partner>> rights_of_left_;
  // By code point: the ranks of the crossing rules that could take one of
  // the character's suffix (prefix) edge symbols while it lives, sorted, in
  // rank_pool_. Dangerous is whether a left character's suffix ranks and a
  // right one's prefix ranks share one.
  struct RuleRanks {
    uint32_t suf_begin = 0, pre_begin = 0;
    uint32_t nsuf = 0, npre = 0;
  };
  std::vector<RuleRanks> rule_ranks_;
  std::vector<uint32_t> rank_pool_;
};

}  // namespace tokenfeed::tokenizer
