#include "tokenizer/char_level_bpe.h"

#include <algorithm>

namespace tokenfeed::tokenizer {
namespace {

// Length of the UTF-8 sequence a lead byte starts (0 for a continuation byte).
inline size_t SequenceLength(unsigned char b) {
  if (b < 0x80) return 1;
  if (b < 0xC0) return 0;
  if (b < 0xE0) return 2;
  if (b < 0xF0) return 3;
  return 4;
}

// Whole characters only (structurally: each lead byte followed by its
// continuation bytes).
bool IsCharAligned(std::string_view b) {
  size_t i = 0;
  while (i < b.size()) {
    size_t len = SequenceLength(static_cast<unsigned char>(b[i]));
    if (len == 0 || i + len > b.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      if (SequenceLength(static_cast<unsigned char>(b[i + k])) != 0) return false;
    }
    i += len;
  }
  return true;
}

// Inside a single multi-byte character: the whole character, a prefix
// starting at its lead byte, or up to three continuation bytes.
bool IsWithinOneChar(std::string_view b) {
  if (b.empty()) return false;
  size_t len = SequenceLength(static_cast<unsigned char>(b[0]));
  if (len == 1) return false;
  for (size_t k = 1; k < b.size(); ++k) {
    if (SequenceLength(static_cast<unsigned char>(b[k])) != 0) return false;
  }
  if (len == 0) return b.size() <= 3;
  return b.size() <= len;
}

constexpr int64_t kNoKey = INT64_MAX;

// (rank + 1) << 8 | position: the order in which the byte-level loop takes
// merges (lowest rank first, leftmost first); 0 is "before every merge".
inline uint32_t PackTime(uint32_t rank, uint32_t pos) { return ((rank + 1) << 8) | pos; }

}  // namespace

std::unique_ptr<CharLevelBpe> CharLevelBpe::Build(const std::vector<MergeTable::Rule>& rules,
                                                  const MergeTable& merges, const int64_t* byte_ids,
                                                  uint32_t id_limit,
                                                  const std::function<std::string_view(uint32_t)>& token_bytes) {
  std::unique_ptr<CharLevelBpe> c(new CharLevelBpe());
  std::copy(byte_ids, byte_ids + 256, c->byte_ids_);
  c->cross_left_.assign(id_limit, 0);
  c->cross_right_.assign(id_limit, 0);
  std::vector<MergeTable::Rule> crossing;
  for (size_t rank = 0; rank < rules.size(); ++rank) {
    const MergeTable::Rule& r = rules[rank];
    if (IsWithinOneChar(token_bytes(r.merged))) continue;                            // inside a character
    if (IsCharAligned(token_bytes(r.left)) && IsCharAligned(token_bytes(r.right))) continue;  // whole characters
    c->cross_left_[r.left] = 1;
    c->cross_right_[r.right] = 1;
    // This table's "merged id" slot holds the rule's rank in the vocabulary.
    crossing.push_back({r.left, r.right, static_cast<uint32_t>(rank)});
  }
  c->crossing_count_ = crossing.size();
  c->crossing_ = MergeTable(crossing);
  c->lefts_of_right_.resize(id_limit);
  c->rights_of_left_.resize(id_limit);
  for (const MergeTable::Rule& r : crossing) {
    c->lefts_of_right_[r.right].push_back({std::string(token_bytes(r.left)), r.left, r.merged});
    c->rights_of_left_[r.left].push_back({std::string(token_bytes(r.right)), r.right, r.merged});
  }

  // A crossing rule whose left side is whole characters can fire once that
  // token has formed, whatever came before its last character: list it with
  // that character. Likewise right sides with their first character.
  auto code_point = [](std::string_view b, size_t at, size_t len) -> uint32_t {
    const auto* q = reinterpret_cast<const unsigned char*>(b.data()) + at;
    if (len == 1) return q[0];
    if (len == 2) return ((q[0] & 0x1Fu) << 6) | (q[1] & 0x3Fu);
    if (len == 3) return ((q[0] & 0x0Fu) << 12) | ((q[1] & 0x3Fu) << 6) | (q[2] & 0x3Fu);
    return 0x110000;  // beyond the table
  };
  std::vector<std::vector<uint32_t>> extra_suf(0x10000), extra_pre(0x10000);
  for (const MergeTable::Rule& r : crossing) {
    std::string_view a = token_bytes(r.left), b = token_bytes(r.right);
    if (IsCharAligned(a) && !a.empty()) {
      size_t last = a.size() - 1;
      while (last > 0 && SequenceLength(static_cast<unsigned char>(a[last])) == 0) --last;
      uint32_t cp = code_point(a, last, a.size() - last);
      if (cp < 0x10000) extra_suf[cp].push_back(r.left);
    }
    if (IsCharAligned(b) && !b.empty()) {
      uint32_t cp = code_point(b, 0, SequenceLength(static_cast<unsigned char>(b[0])));
      if (cp < 0x10000) extra_pre[cp].push_back(r.right);
    }
  }

  c->bmp_.resize(0x10000);
  c->rule_ranks_.resize(0x10000);
  unsigned char buf[3];
  for (uint32_t cp = 0; cp < 0x10000; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;  // surrogates are never in valid UTF-8
    size_t len;
    if (cp < 0x80) {
      buf[0] = static_cast<unsigned char>(cp);
      len = 1;
    } else if (cp < 0x800) {
      buf[0] = static_cast<unsigned char>(0xC0 | (cp >> 6));
      buf[1] = static_cast<unsigned char>(0x80 | (cp & 0x3F));
      len = 2;
    } else {
      buf[0] = static_cast<unsigned char>(0xE0 | (cp >> 12));
      buf[1] = static_cast<unsigned char>(0x80 | ((cp >> 6) & 0x3F));
      buf[2] = static_cast<unsigned char>(0x80 | (cp & 0x3F));
      len = 3;
    }
    c->ComputeInfo(merges, buf, len, extra_suf[cp], extra_pre[cp], &c->bmp_[cp]);
  }
  return c;
}

// Runs byte-level BPE on one character alone, recording its final symbols,
// when its last symbol was completed, and which of the symbols it shows at
// its edges along the way take part in crossing rules.
void CharLevelBpe::ComputeInfo(const MergeTable& merges, const unsigned char* bytes, size_t len,
                               const std::vector<uint32_t>& extra_suf, const std::vector<uint32_t>& extra_pre,
                               CharInfo* info) {
  uint32_t syms[4];
  uint32_t offs[4];
  size_t n = len;
  for (size_t i = 0; i < n; ++i) {
    syms[i] = static_cast<uint32_t>(byte_ids_[bytes[i]]);
    offs[i] = static_cast<uint32_t>(i);
  }
  // Edge symbols with the rank at which the character's own merges consume
  // them; whole-character tokens from outside (the extras) may live forever.
  std::vector<Edge> suf, pre;
  for (uint32_t id : extra_suf) suf.push_back({id, UINT32_MAX});
  for (uint32_t id : extra_pre) pre.push_back({id, UINT32_MAX});
  // The edge symbols alive now: the ones at the first and last position.
  size_t live_suf = 0, live_pre = 0;
  auto note = [](std::vector<Edge>& edges, uint32_t id) -> size_t {
    edges.push_back({id, UINT32_MAX});
    return edges.size() - 1;
  };
  live_suf = note(suf, syms[n - 1]);
  live_pre = note(pre, syms[0]);
  uint32_t birth = 0;
  while (n > 1) {
    uint32_t best = UINT32_MAX, best_merged = 0;
    size_t at = 0;
    for (size_t i = 0; i + 1 < n; ++i) {
      MergeRule r = merges.Find(syms[i], syms[i + 1]);
      if (r.rank == MergeTable::kNoRank) continue;
      uint32_t t = PackTime(r.rank, offs[i]);
      if (t < best) {
        best = t;
        best_merged = r.merged_id;
        at = i;
      }
    }
    if (best == UINT32_MAX) break;
    birth = std::max(birth, best);
    // Consumed symbols die at the merge's effective time: the running maximum.
    const uint32_t death_rank = (birth >> 8) - 1;
    if (at == 0) pre[live_pre].death = death_rank;
    if (at + 2 == n) suf[live_suf].death = death_rank;
    syms[at] = best_merged;
    for (size_t i = at + 1; i + 1 < n; ++i) {
      syms[i] = syms[i + 1];
      offs[i] = offs[i + 1];
    }
    --n;
    if (at == 0) live_pre = note(pre, syms[0]);
    if (at + 1 == n) live_suf = note(suf, syms[n - 1]);
  }
  for (size_t i = 0; i < n; ++i) info->syms[i] = syms[i];
  info->nsyms = static_cast<uint8_t>(n);
  info->birth = birth;
  // A rule counts only with its effective rank: a pair listed twice takes
  // its last rank, as crossing_ does.
  RuleRanks& ranks = rule_ranks_[static_cast<size_t>(info - bmp_.data())];
  auto add_ranks = [this](std::vector<uint32_t>* found, uint32_t* begin, uint32_t* count) {
    std::sort(found->begin(), found->end());
    found->erase(std::unique(found->begin(), found->end()), found->end());
    *begin = static_cast<uint32_t>(rank_pool_.size());
    *count = static_cast<uint32_t>(found->size());
    rank_pool_.insert(rank_pool_.end(), found->begin(), found->end());
  };
  std::vector<uint32_t> found;
  info->suf_begin = static_cast<uint32_t>(edges_.size());
  for (const Edge& e : suf) {
    if (!cross_left_[e.id]) continue;
    edges_.push_back(e);
    for (const Partner& right : rights_of_left_[e.id]) {
      if (right.rank > e.death || crossing_.Find(e.id, right.id).merged_id != right.rank) continue;
      info->suf_rules |= RuleBit(right.rank);
      found.push_back(right.rank);
    }
  }
  info->nsuf = static_cast<uint16_t>(edges_.size() - info->suf_begin);
  add_ranks(&found, &ranks.suf_begin, &ranks.nsuf);
  found.clear();
  info->pre_begin = static_cast<uint32_t>(edges_.size());
  for (const Edge& e : pre) {
    if (!cross_right_[e.id]) continue;
    edges_.push_back(e);
    for (const Partner& left : lefts_of_right_[e.id]) {
      if (left.rank > e.death || crossing_.Find(left.id, e.id).merged_id != left.rank) continue;
      info->pre_rules |= RuleBit(left.rank);
      found.push_back(left.rank);
    }
  }
  info->npre = static_cast<uint16_t>(edges_.size() - info->pre_begin);
  add_ranks(&found, &ranks.pre_begin, &ranks.npre);
}

const CharLevelBpe::CharInfo* CharLevelBpe::Lookup(const unsigned char* p, size_t len) const {
  uint32_t cp;
  if (len == 1) cp = p[0];
  else if (len == 2) cp = ((p[0] & 0x1Fu) << 6) | (p[1] & 0x3Fu);
  else if (len == 3) cp = ((p[0] & 0x0Fu) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu);
  else return nullptr;  // supplementary planes: the byte-level loop handles them
  const CharInfo* info = &bmp_[cp];
  return info->nsyms ? info : nullptr;
}

bool CharLevelBpe::Dangerous(const CharInfo& left, const CharInfo& right) const {
  // A crossing rule can fire only while both sides are alive: both are
  // consumed by their characters' merges no later than their death ranks,
  // and every merge before a symbol's death is taken at or below that rank.
  // So: is there a rule that the left character's suffix edges admit and the
  // right one's prefix edges admit too?
  const RuleRanks& l = rule_ranks_[static_cast<size_t>(&left - bmp_.data())];
  const RuleRanks& r = rule_ranks_[static_cast<size_t>(&right - bmp_.data())];
  const uint32_t* a = rank_pool_.data() + l.suf_begin;
  const uint32_t* b = rank_pool_.data() + r.pre_begin;
  size_t na = l.nsuf, nb = r.npre;
  if (na > nb) {
    std::swap(a, b);
    std::swap(na, nb);
  }
  for (size_t i = 0; i < na; ++i) {
    if (std::binary_search(b, b + nb, a[i])) return true;
  }
  return false;
}

bool CharLevelBpe::DangerousAfter(std::string_view before, const CharInfo& info) const {
  const Edge* pre = edges_.data() + info.pre_begin;
  for (size_t b = 0; b < info.npre; ++b) {
    for (const Partner& a : lefts_of_right_[pre[b].id]) {
      if (a.rank <= pre[b].death && before.size() >= a.bytes.size() &&
          before.substr(before.size() - a.bytes.size()) == a.bytes) {
        return true;
      }
    }
  }
  return false;
}

bool CharLevelBpe::DangerousBefore(const CharInfo& info, std::string_view after) const {
  const Edge* suf = edges_.data() + info.suf_begin;
  for (size_t a = 0; a < info.nsuf; ++a) {
    for (const Partner& b : rights_of_left_[suf[a].id]) {
      if (b.rank <= suf[a].death && after.substr(0, b.bytes.size()) == b.bytes) return true;
    }
  }
  return false;
}

bool CharLevelBpe::Encode(std::string_view piece, const MergeTable& merges, std::vector<uint32_t>* out) const {
  const auto* p = reinterpret_cast<const unsigned char*>(piece.data());
  const size_t n = piece.size();
  if (n > 255) return false;
  // The characters, and which of them must run byte by byte ("disturbed"):
  // those where a crossing rule may fire at an edge.
  const CharInfo* infos[256];
  uint8_t starts[257];
  bool disturbed[256];
  size_t chars = 0;
  for (size_t i = 0; i < n; ++chars) {
    size_t len = SequenceLength(p[i]);
    const CharInfo* info = Lookup(p + i, len);
    if (!info) return false;
    infos[chars] = info;
    starts[chars] = static_cast<uint8_t>(i);
    disturbed[chars] = false;
    i += len;
  }
  starts[chars] = static_cast<uint8_t>(n);  // n <= 255
  size_t undisturbed = chars;
  for (size_t c = 0; c + 1 < chars; ++c) {
    if ((infos[c]->suf_rules & infos[c + 1]->pre_rules) != 0 && Dangerous(*infos[c], *infos[c + 1])) {
      undisturbed -= !disturbed[c] + !disturbed[c + 1];
      disturbed[c] = disturbed[c + 1] = true;
    }
  }
  if (undisturbed != chars) {
    // A character next to a disturbed one is safe only if no crossing rule
    // can join its edge symbols to whatever token the text offers there.
    bool changed = true;
    while (changed && undisturbed > 0) {
      changed = false;
      for (size_t c = 0; c < chars; ++c) {
        if (disturbed[c]) continue;
        bool left = c > 0 && disturbed[c - 1] &&
                    DangerousAfter(piece.substr(0, starts[c]), *infos[c]);
        bool right = c + 1 < chars && disturbed[c + 1] &&
                     DangerousBefore(*infos[c], piece.substr(starts[c + 1]));
        if (left || right) {
          disturbed[c] = true;
          --undisturbed;
          changed = true;
        }
      }
    }
    if (undisturbed == 0) return false;
  }
  // Symbols: an undisturbed character's own tokens, with the time they are
  // complete; a disturbed character's bytes.
  uint32_t ids[256];
  uint32_t birth[256];
  uint8_t off[256];
  size_t count = 0;
  for (size_t c = 0; c < chars; ++c) {
    const size_t i = starts[c];
    if (disturbed[c]) {
      for (size_t k = i; k < starts[c + 1]; ++k) {
        ids[count] = static_cast<uint32_t>(byte_ids_[p[k]]);
        birth[count] = 0;
        off[count] = static_cast<uint8_t>(k);
        ++count;
      }
      continue;
    }
    const CharInfo* info = infos[c];
    for (size_t k = 0; k < info->nsyms; ++k) {
      ids[count] = info->syms[k];
      // A character's birth is relative to its own first byte.
      birth[count] = info->birth ? info->birth + static_cast<uint32_t>(i) : 0;
      off[count] = static_cast<uint8_t>(i + k);  // order-preserving, inside the character
      ++count;
    }
  }
  // The merge loop of the byte-level run, with each merge due at the later of
  // its own time and the births of its two sides.
  int64_t keys[256];
  uint32_t eff_of[256];
  uint8_t next[256], prev[256];
  auto key_of = [&](size_t i, size_t j) -> int64_t {
    const uint32_t rank = merges.FindRank(ids[i], ids[j]);
    if (rank == MergeTable::kNoRank) return kNoKey;
    uint32_t own = PackTime(rank, off[i]);
    uint32_t eff = std::max(own, std::max(birth[i], birth[j]));
    eff_of[i] = eff;
    return (static_cast<int64_t>(eff) << 31) | own;
  };
  // A key's low byte is its left symbol's byte offset, which maps back to
  // the symbol: so the next merge is a plain minimum (branch-free).
  uint8_t index_of_offset[256];
  for (size_t i = 0; i < count; ++i) {
    next[i] = static_cast<uint8_t>(i + 1);
    prev[i] = static_cast<uint8_t>(i - 1);
    index_of_offset[off[i]] = static_cast<uint8_t>(i);
  }
  for (size_t i = 0; i + 1 < count; ++i) keys[i] = key_of(i, i + 1);
  keys[count - 1] = kNoKey;
  while (true) {
    int64_t best = kNoKey;
    for (size_t i = 0; i < count; ++i) best = keys[i] < best ? keys[i] : best;
    if (best == kNoKey) break;
    const size_t at = index_of_offset[best & 0xFF];
    const size_t j = next[at];
    ids[at] = merges.MergedOf(static_cast<uint32_t>((best & 0x7FFFFFFF) >> 8) - 1);  // own's rank
    birth[at] = eff_of[at];
    keys[j] = kNoKey;
    const size_t k = next[j];
    next[at] = static_cast<uint8_t>(k);
    if (k < count) prev[k] = static_cast<uint8_t>(at);
    keys[at] = k < count ? key_of(at, k) : kNoKey;
    if (at > 0) keys[prev[at]] = key_of(prev[at], at);
  }
  for (size_t i = 0; i < count; i = next[i]) out->push_back(ids[i]);
  return true;
}

}  // namespace tokenfeed::tokenizer
