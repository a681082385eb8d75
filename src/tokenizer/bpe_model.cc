#include "tokenizer/bpe_model.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <unordered_map>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "base/json_writer.h"
#include "base/utf8.h"
#include "tokenizer/byte_level_alphabet.h"
#include "tokenizer/unicode_class.h"

namespace tokenfeed::tokenizer {
namespace {

constexpr uint32_t kNoToken = UINT32_MAX;

// Decodes token text spelled in the byte-level alphabet back into bytes.
// Returns false when some character is outside the alphabet.
bool TextToBytes(std::string_view text, std::string* bytes) {
  bytes->clear();
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    char32_t cp;
    unsigned char b = p[i];
    if (b < 0x80) {
      cp = b;
      i += 1;
    } else if ((b & 0xE0) == 0xC0 && i + 1 < n) {
      cp = (char32_t(b & 0x1F) << 6) | (p[i + 1] & 0x3F);
      i += 2;
    } else {
      return false;  // every alphabet character is below U+0800
    }
    int byte = kByteLevelAlphabet.CharToByte(cp);
    if (byte < 0) return false;
    bytes->push_back(static_cast<char>(byte));
  }
  return true;
}

std::string AlphabetChar(unsigned char b) {
  std::string s;
  AppendUtf8(kByteLevelAlphabet.byte_to_char[b], &s);
  return s;
}

bool HasNonAscii(std::string_view s) {
  const char* p = s.data();
  size_t n = s.size();
  uint64_t high = 0;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    high |= w;
  }
  for (; n > 0; ++p, --n) high |= static_cast<unsigned char>(*p);
  return (high & 0x8080808080808080ULL) != 0;
}

// The smallest of keys[0, n), for n a multiple of 4. HOT PATH: the merge
// loops take one per merge; four keys at a time.
inline int32_t MinKey(const int32_t* keys, size_t n) {
#if defined(__SSE2__)
  __m128i m = _mm_set1_epi32(INT32_MAX);
  for (size_t i = 0; i < n; i += 4) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(keys + i));
    const __m128i less = _mm_cmplt_epi32(v, m);
    m = _mm_or_si128(_mm_and_si128(less, v), _mm_andnot_si128(less, m));
  }
  __m128i other = _mm_shuffle_epi32(m, _MM_SHUFFLE(1, 0, 3, 2));
  __m128i less = _mm_cmplt_epi32(other, m);
  m = _mm_or_si128(_mm_and_si128(less, other), _mm_andnot_si128(less, m));
  other = _mm_shuffle_epi32(m, _MM_SHUFFLE(2, 3, 0, 1));
  less = _mm_cmplt_epi32(other, m);
  m = _mm_or_si128(_mm_and_si128(less, other), _mm_andnot_si128(less, m));
  return _mm_cvtsi128_si32(m);
#else
  int32_t best = INT32_MAX;
  for (size_t i = 0; i < n; ++i) best = keys[i] < best ? keys[i] : best;
  return best;
#endif
}

// The length of the UTF-8 sequence that lead byte `b` starts, at most
// `left` (the text is valid UTF-8; the bound keeps a bad byte in range).
inline size_t Utf8SequenceLength(unsigned char b, size_t left) {
  const size_t len = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
  return len < left ? len : left;
}

// A token as a JSON string, escapes and all, for messages.
std::string Quoted(std::string_view token) {
  std::string out;
  JsonWriter(&out).String(token);
  return out;
}

bool HeapLess(const BpeScratch::HeapEntry& a, const BpeScratch::HeapEntry& b) {
  // std::push_heap builds a max-heap: "less" means "merged later".
  if (a.rank != b.rank) return a.rank > b.rank;
  return a.pos > b.pos;
}

}  // namespace

Result<BpeModel> BpeModel::Build(const BpeSpec& spec) {
  BpeModel m;
  uint32_t limit = 0;
  for (const auto& [text, id] : spec.vocab) {
    if (id == kNoToken) return Status::InvalidArgument("model.vocab: id 4294967295 is out of range");
    limit = std::max(limit, id + 1);
  }
  // Checked before the tables below are sized by the largest id.
  if (spec.merges.size() > MergeTable::kMaxRank || limit > MergeTable::kMaxId + 1) {
    return Status::Unsupported("the vocabulary has " + std::to_string(limit) + " ids and " +
                               std::to_string(spec.merges.size()) + " merges; tokenfeed supports up to " +
                               std::to_string(MergeTable::kMaxId + 1) + " ids and " +
                               std::to_string(MergeTable::kMaxRank) + " merges");
  }
  m.text_offsets_.assign(limit, {kNoToken, 0});
  m.bytes_offsets_.assign(limit, {kNoToken, 0});
  std::string bytes;
  for (const auto& [text, id] : spec.vocab) {
    // One token per id and one id per token. A file that breaks either has
    // no single decoding (the reference keeps whichever entry its hash map
    // happens to hold last), so it is refused rather than guessed at.
    if (!m.text_index_.Insert(text, id)) {
      return Status::InvalidArgument("model.vocab[" + Quoted(text) + "]: the token appears more than once");
    }
    if (const auto [offset, size] = m.text_offsets_[id]; offset != kNoToken) {
      return Status::InvalidArgument("model.vocab[" + Quoted(text) + "]: id " + std::to_string(id) +
                                     " is already the id of " +
                                     Quoted(std::string_view(m.text_arena_).substr(offset, size)) +
                                     "; each id must name one token");
    }
    m.text_offsets_[id] = {static_cast<uint32_t>(m.text_arena_.size()), static_cast<uint32_t>(text.size())};
    m.text_arena_.append(text);
    if (!spec.byte_level) {
      m.bytes_offsets_[id] = m.text_offsets_[id];
      m.bytes_index_.Insert(text, id);
      continue;
    }
    bool in_alphabet = TextToBytes(text, &bytes);
    const std::string& decoded = in_alphabet ? bytes : text;
    m.bytes_offsets_[id] = {static_cast<uint32_t>(m.bytes_arena_.size()), static_cast<uint32_t>(decoded.size())};
    m.bytes_arena_.append(decoded);
    if (in_alphabet) m.bytes_index_.Insert(bytes, id);
  }
  if (!spec.byte_level) m.bytes_arena_ = m.text_arena_;
  m.vocab_size_ = m.text_index_.size();
  m.byte_level_ = spec.byte_level;

  m.continuing_subword_prefix_ = spec.continuing_subword_prefix;
  m.end_of_word_suffix_ = spec.end_of_word_suffix;
  m.fuse_unk_ = spec.fuse_unk;
  m.byte_fallback_ = spec.byte_fallback;
  m.ignore_merges_ = spec.ignore_merges;
  if (spec.unk_token) {
    auto unk = m.text_index_.Find(*spec.unk_token);
    if (!unk) {
      return Status::InvalidArgument("model.unk_token '" + *spec.unk_token + "' is not in model.vocab");
    }
    m.unk_id_ = *unk;
  }

  m.simple_bytes_ = m.continuing_subword_prefix_.empty() && m.end_of_word_suffix_.empty();
  if (!m.byte_level_) m.simple_bytes_ = false;
  for (int b = 0; b < 256; ++b) {
    std::optional<uint32_t> id;
    if (m.byte_level_) {
      id = m.text_index_.Find(AlphabetChar(static_cast<unsigned char>(b)));
    } else if (b < 0x80) {
      id = m.text_index_.Find(std::string(1, static_cast<char>(b)));
    }
    m.byte_ids_[b] = id ? int64_t{*id} : -1;
    if (!id) m.simple_bytes_ = false;
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    auto fb = m.text_index_.Find(name);
    m.byte_fallback_ids_[b] = fb ? int64_t{*fb} : -1;
  }

  // Merge rule i joins tokens a and b into a + b (b without the continuing
  // prefix), with rank i. Every token must be in the vocabulary.
  std::vector<MergeTable::Rule> rules;
  rules.reserve(spec.merges.size());
  const size_t prefix_len = m.continuing_subword_prefix_.size();
  std::string joined;
  for (size_t rank = 0; rank < spec.merges.size(); ++rank) {
    // Named references, not a structured binding: the lambda below captures
    // them, which clang before 16 does not allow for bindings.
    const auto& a = spec.merges[rank].first;
    const auto& b = spec.merges[rank].second;
    auto a_id = m.text_index_.Find(a);
    auto b_id = m.text_index_.Find(b);
    auto where = [&] { return "model.merges[" + std::to_string(rank) + "] (\"" + a + "\", \"" + b + "\"): "; };
    if (!a_id) return Status::InvalidArgument(where() + "token '" + a + "' is not in model.vocab");
    if (!b_id) return Status::InvalidArgument(where() + "token '" + b + "' is not in model.vocab");
    joined.assign(a);
    if (b.size() < prefix_len) {
      return Status::InvalidArgument(where() + "token '" + b + "' is shorter than continuing_subword_prefix");
    }
    joined.append(b, prefix_len);
    auto merged = m.text_index_.Find(joined);
    if (!merged) return Status::InvalidArgument(where() + "merged token '" + joined + "' is not in model.vocab");
    rules.push_back({*a_id, *b_id, *merged});
  }
  m.merges_ = MergeTable(rules);
  if (m.simple_bytes_) {
    m.char_level_ = CharLevelBpe::Build(rules, m.merges_, m.byte_ids_, limit,
                                        [&m](uint32_t id) { return m.DecodedBytes(id); });
    m.boundaries_ = MergeBoundaries::Build(rules, [&m](uint32_t id) { return m.DecodedBytes(id); });
  } else if (!m.byte_level_ && m.CharBoundariesAreExact(rules)) {
    m.boundaries_ = MergeBoundaries::Build(rules, [&m](uint32_t id) { return m.DecodedBytes(id); });
    if (m.boundaries_) {
      for (char32_t c = 0; c < 0x80; ++c) m.ascii_joined_by_many_[c] = m.boundaries_->QuickCanJoin(0, c) < 0;
    }
  }
  if (!m.byte_level_) {
    // The id of each single-character token of the Basic Multilingual Plane.
    m.bmp_ids_.assign(0x10000, kNoToken);
    for (const auto& [text, id] : spec.vocab) {
      const auto* t = reinterpret_cast<const unsigned char*>(text.data());
      char32_t cp;
      if (text.size() >= 2 && text.size() <= 3 && unicode::DecodeUtf8(t, t + text.size(), &cp) == text.size() &&
          cp < 0x10000) {
        m.bmp_ids_[cp] = *m.text_index_.Find(text);  // the id the text has after duplicates
      }
    }
  }
  return m;
}

std::string_view BpeModel::DecodedBytes(uint32_t id) const {
  if (id >= bytes_offsets_.size() || bytes_offsets_[id].first == kNoToken) return {};
  return std::string_view(bytes_arena_).substr(bytes_offsets_[id].first, bytes_offsets_[id].second);
}

bool BpeModel::HasId(uint32_t id) const { return id < text_offsets_.size() && text_offsets_[id].first != kNoToken; }

std::string_view BpeModel::TokenText(uint32_t id) const {
  if (!HasId(id)) return {};
  return std::string_view(text_arena_).substr(text_offsets_[id].first, text_offsets_[id].second);
}

std::optional<uint32_t> BpeModel::TextToId(std::string_view text) const { return text_index_.Find(text); }

size_t BpeModel::memory_bytes() const {
  return merges_.memory_bytes() + bytes_index_.memory_bytes() + text_index_.memory_bytes() + text_arena_.capacity() +
         bytes_arena_.capacity() + (text_offsets_.capacity() + bytes_offsets_.capacity()) * 8 +
         bmp_ids_.capacity() * sizeof(uint32_t);
}

// MergeBoundaries reads a character-level rule's operands as the
// characters they spell, which is what they stand for when every initial
// symbol is one character's own token. Cutting a piece is then exact unless
// a character can start as something else that a rule or a neighbour could
// see: a <0xNN> token that is an operand of a rule, or the unknown token,
// which joins its neighbours when fused (and, as in the reference, is put
// after byte-fallback tokens that follow it). Prefixes and suffixes depend
// on where a piece starts and ends, so they rule cutting out too.
bool BpeModel::CharBoundariesAreExact(const std::vector<MergeTable::Rule>& rules) const {
  if (!continuing_subword_prefix_.empty() || !end_of_word_suffix_.empty()) return false;
  bool all_fallback = byte_fallback_;
  for (int b = 0; b < 256; ++b) all_fallback = all_fallback && byte_fallback_ids_[b] >= 0;
  if (unk_id_ && !all_fallback) return false;
  std::vector<uint8_t> special(id_limit(), 0);
  for (int b = 0; b < 256; ++b) {
    if (byte_fallback_ids_[b] >= 0) special[static_cast<size_t>(byte_fallback_ids_[b])] = 1;
  }
  if (unk_id_) special[*unk_id_] = 1;
  for (const MergeTable::Rule& r : rules) {
    if (special[r.left] || special[r.right]) return false;
  }
  return true;
}

// The reference's merge_word for a character-level vocabulary: each
// character (with the prefix unless first, the suffix if last) is a token of
// its own, else its bytes' <0xNN> tokens, else the unknown token (one for a
// run when fuse_unk), else nothing.
// HOT PATH for character-level models: every word-cache miss starts here.
void BpeModel::InitialCharSymbols(std::string_view piece, std::vector<uint32_t>* symbols) const {
  const auto* p = reinterpret_cast<const unsigned char*>(piece.data());
  const size_t n = piece.size();
  const bool plain = continuing_subword_prefix_.empty() && end_of_word_suffix_.empty();
  bool pending_unk = false;
  std::string decorated;
  size_t i = 0;
  while (i < n) {
    const size_t len = Utf8SequenceLength(p[i], n - i);
    std::optional<uint32_t> id;
    std::string_view s(piece.data() + i, len);
    if (plain) {
      if (len == 1) {
        if (byte_ids_[p[i]] >= 0) id = static_cast<uint32_t>(byte_ids_[p[i]]);
      } else if (len < 4 && !bmp_ids_.empty()) {
        char32_t cp;
        unicode::DecodeUtf8(p + i, p + i + len, &cp);
        if (cp < bmp_ids_.size() && bmp_ids_[cp] != kNoToken) id = bmp_ids_[cp];
      } else {
        id = text_index_.Find(s);
      }
    } else {
      decorated.clear();
      if (i > 0) decorated.append(continuing_subword_prefix_);
      decorated.append(s);
      if (i + len == n) decorated.append(end_of_word_suffix_);
      s = decorated;
      id = text_index_.Find(s);
    }
    i += len;
    if (id) {
      if (pending_unk) {
        symbols->push_back(*unk_id_);
        pending_unk = false;
      }
      symbols->push_back(*id);
      continue;
    }
    if (AppendByteFallback(s, symbols)) continue;
    if (unk_id_) {
      if (pending_unk && !fuse_unk_) symbols->push_back(*unk_id_);
      pending_unk = true;
    }
  }
  if (pending_unk) symbols->push_back(*unk_id_);
}

bool BpeModel::AppendByteFallback(std::string_view s, std::vector<uint32_t>* symbols) const {
  if (!byte_fallback_) return false;
  for (unsigned char c : s) {
    if (byte_fallback_ids_[c] < 0) return false;
  }
  for (unsigned char c : s) symbols->push_back(static_cast<uint32_t>(byte_fallback_ids_[c]));
  return true;
}

void BpeModel::InitialSymbols(std::string_view piece, std::vector<uint32_t>* symbols) const {
  const auto* p = reinterpret_cast<const unsigned char*>(piece.data());
  const size_t n = piece.size();
  if (!byte_level_) {
    InitialCharSymbols(piece, symbols);
    return;
  }
  if (simple_bytes_) {
    for (size_t i = 0; i < n; ++i) symbols->push_back(static_cast<uint32_t>(byte_ids_[p[i]]));
    return;
  }
  // The general rules of the reference's merge_word: each byte is one
  // character of the alphabet; prefixes and suffixes decorate all but the
  // first and the last; unknown characters fall back to <0xXX> tokens, or the
  // unknown token, or are dropped.
  std::optional<std::pair<uint32_t, size_t>> pending_unk;
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s.clear();
    if (i > 0) s.append(continuing_subword_prefix_);
    s.append(AlphabetChar(p[i]));
    if (i + 1 == n) s.append(end_of_word_suffix_);
    if (auto id = text_index_.Find(s)) {
      if (pending_unk) {
        symbols->push_back(pending_unk->first);
        pending_unk.reset();
      }
      symbols->push_back(*id);
      continue;
    }
    if (AppendByteFallback(s, symbols)) continue;
    if (unk_id_) {
      if (pending_unk && fuse_unk_) {
        pending_unk->second += 1;
      } else {
        if (pending_unk) symbols->push_back(pending_unk->first);
        pending_unk = std::pair<uint32_t, size_t>{*unk_id_, 1};
      }
    }
  }
  if (pending_unk) symbols->push_back(pending_unk->first);
}

// Pieces of up to 32 symbols: the same packed keys, but one plain minimum
// over all of them per merge, which beats any bookkeeping at this size.
// HOT PATH.
void BpeModel::MergeSmall(BpeScratch* scratch) const {
  auto& ids = scratch->symbols;
  const size_t n = ids.size();
  constexpr int32_t kNone = INT32_MAX;
  int32_t* keys = scratch->keys;
  uint8_t* next = scratch->next;
  uint8_t* prev = scratch->prev;
  auto key_of = [&](size_t i, size_t j) -> int32_t {
    const uint32_t rank = merges_.FindRank(ids[i], ids[j]);
    if (rank == MergeTable::kNoRank) return kNone;
    return static_cast<int32_t>((rank << 8) | i);
  };
  for (size_t i = 0; i < n; ++i) {
    next[i] = static_cast<uint8_t>(i + 1);
    prev[i] = static_cast<uint8_t>(i - 1);  // prev[0] is never read
  }
  for (size_t i = 0; i + 1 < n; ++i) keys[i] = key_of(i, i + 1);
  const size_t padded = (n + 3) & ~size_t{3};
  for (size_t i = n - 1; i < padded; ++i) keys[i] = kNone;
  while (true) {
    const int32_t best = MinKey(keys, padded);
    if (best == kNone) break;
    const size_t i = static_cast<size_t>(best) & 0xFF;
    const size_t j = next[i];
    ids[i] = merges_.MergedOf(static_cast<uint32_t>(best) >> 8);
    keys[j] = kNone;
    const size_t k = next[j];
    next[i] = static_cast<uint8_t>(k);
    if (k < n) prev[k] = static_cast<uint8_t>(i);
    keys[i] = k < n ? key_of(i, k) : kNone;
    if (i > 0) keys[prev[i]] = key_of(prev[i], i);
  }
  size_t out = 0;
  for (size_t i = 0; i < n; i = next[i]) ids[out++] = ids[i];
  ids.resize(out);
}

// For pieces of 33 to kMediumLimit symbols. Every adjacent pair's (rank,
// position) is packed into one int32 key, so "the lowest rank, leftmost on
// ties" is the minimum key; keys sit in blocks of 16 with a per-block
// minimum, so finding the next merge reads at most 16 block minima and each
// key update rescans one block (vectorized). Merged symbols are unlinked, not
// shifted. HOT PATH: almost every word-cache miss of real text lands here.
void BpeModel::MergeShort(BpeScratch* scratch) const {
  auto& ids = scratch->symbols;
  const size_t n = ids.size();
  if (n < 2) return;
  if (n <= 2 * BpeScratch::kBlock) {
    MergeSmall(scratch);
    return;
  }
  constexpr int32_t kNone = INT32_MAX;
  constexpr size_t kBlock = BpeScratch::kBlock;
  int32_t* keys = scratch->keys;
  int32_t* block_min = scratch->block_min;
  uint8_t* next = scratch->next;
  uint8_t* prev = scratch->prev;
  const size_t blocks = (n + kBlock - 1) / kBlock;
  for (size_t i = n; i < blocks * kBlock; ++i) keys[i] = kNone;
  auto key_of = [&](size_t i, size_t j) -> int32_t {
    const uint32_t rank = merges_.FindRank(ids[i], ids[j]);
    if (rank == MergeTable::kNoRank) return kNone;
    return static_cast<int32_t>((rank << 8) | i);
  };
  auto refresh_block = [&](size_t b) { block_min[b] = MinKey(keys + b * kBlock, kBlock); };
  for (size_t i = 0; i < n; ++i) {
    next[i] = static_cast<uint8_t>(i + 1);
    prev[i] = static_cast<uint8_t>(i - 1);  // prev[0] is never read
  }
  for (size_t i = 0; i + 1 < n; ++i) keys[i] = key_of(i, i + 1);
  keys[n - 1] = kNone;
  for (size_t b = 0; b < blocks; ++b) refresh_block(b);
  const size_t padded_blocks = (blocks + 3) & ~size_t{3};
  for (size_t b = blocks; b < padded_blocks; ++b) block_min[b] = kNone;
  while (true) {
    const int32_t best = MinKey(block_min, padded_blocks);
    if (best == kNone) break;
    const size_t i = static_cast<size_t>(best) & 0xFF;
    const size_t j = next[i];
    ids[i] = merges_.MergedOf(static_cast<uint32_t>(best) >> 8);
    keys[j] = kNone;
    const size_t k = next[j];
    next[i] = static_cast<uint8_t>(k);
    if (k < n) prev[k] = static_cast<uint8_t>(i);
    keys[i] = k < n ? key_of(i, k) : kNone;
    const size_t bi = i / kBlock, bj = j / kBlock;
    refresh_block(bi);
    if (bj != bi) refresh_block(bj);
    if (i > 0) {
      const size_t p = prev[i];
      keys[p] = key_of(p, i);
      const size_t bp = p / kBlock;
      if (bp != bi) refresh_block(bp);
      else refresh_block(bi);
    }
  }
  size_t out = 0;
  for (size_t i = 0; i < n; i = next[i]) ids[out++] = ids[i];
  ids.resize(out);
}

// O(n log n): a heap of candidate merges over a linked list of symbols, for
// long pieces (a megabyte of one character class must not take quadratic time).
void BpeModel::MergeLong(BpeScratch* scratch) const {
  auto& ids = scratch->symbols;
  auto& nodes = scratch->nodes;
  auto& heap = scratch->heap;
  const size_t n = ids.size();
  nodes.resize(n);
  heap.clear();
  for (size_t i = 0; i < n; ++i) {
    nodes[i] = {ids[i], static_cast<int32_t>(i) - 1, i + 1 < n ? static_cast<int32_t>(i + 1) : -1};
  }
  for (size_t i = 0; i + 1 < n; ++i) {
    MergeRule r = merges_.Find(ids[i], ids[i + 1]);
    if (r.rank != MergeTable::kNoRank) heap.push_back({r.rank, static_cast<uint32_t>(i), r.merged_id});
  }
  std::make_heap(heap.begin(), heap.end(), HeapLess);
  constexpr uint32_t kRemoved = UINT32_MAX;
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), HeapLess);
    BpeScratch::HeapEntry top = heap.back();
    heap.pop_back();
    BpeScratch::Node& left = nodes[top.pos];
    if (left.id == kRemoved || left.next < 0) continue;
    BpeScratch::Node& right = nodes[left.next];
    // Skip entries made stale by an earlier merge next to them.
    MergeRule now = merges_.Find(left.id, right.id);
    if (now.rank == MergeTable::kNoRank || now.merged_id != top.merged_id) continue;
    left.id = top.merged_id;
    int32_t after = right.next;
    right.id = kRemoved;
    left.next = after;
    if (after >= 0) nodes[after].prev = static_cast<int32_t>(top.pos);
    if (left.prev >= 0) {
      MergeRule r = merges_.Find(nodes[left.prev].id, left.id);
      if (r.rank != MergeTable::kNoRank) {
        heap.push_back({r.rank, static_cast<uint32_t>(left.prev), r.merged_id});
        std::push_heap(heap.begin(), heap.end(), HeapLess);
      }
    }
    if (after >= 0) {
      MergeRule r = merges_.Find(left.id, nodes[after].id);
      if (r.rank != MergeTable::kNoRank) {
        heap.push_back({r.rank, top.pos, r.merged_id});
        std::push_heap(heap.begin(), heap.end(), HeapLess);
      }
    }
  }
  size_t out = 0;
  for (size_t i = 0; i < n; ++i) {
    if (nodes[i].id != kRemoved) ids[out++] = nodes[i].id;
  }
  ids.resize(out);
}

void BpeModel::EncodePieceUncached(std::string_view piece, BpeScratch* scratch, std::vector<uint32_t>* out) const {
  EncodeUncached(piece, scratch, /*use_cache=*/false, out);
}

void BpeModel::EncodeUncached(std::string_view piece, BpeScratch* scratch, bool use_cache,
                              std::vector<uint32_t>* out) const {
  if (piece.empty()) return;
  if (ignore_merges_) {
    if (auto id = bytes_index_.Find(piece)) {
      out->push_back(*id);
      return;
    }
  }
  if (use_cache && boundaries_) {
    if (byte_level_ ? char_level_ && HasNonAscii(piece) && EncodeInParts(piece, scratch, out)
                    : EncodeCharsInParts(piece, scratch, out)) {
      return;
    }
  }
  EncodeByMerges(piece, scratch, out);
}

void BpeModel::EncodeByMerges(std::string_view piece, BpeScratch* scratch, std::vector<uint32_t>* out) const {
  if (char_level_ && HasNonAscii(piece) && char_level_->Encode(piece, merges_, out)) return;
  MergeBytes(piece, scratch, out);
}

// Why the parts' results make up the piece's: where no rule can join the
// two sides of a boundary, no merge of the byte-level run ever spans it, and
// then merges on one side never change which merge comes next on the other
// (the lowest rank, leftmost among equals, restricted to one side is that
// side's own order). So the piece's tokens are each part's tokens as BPE
// gives them for the part alone -- what the cache holds.
// HOT PATH for CJK text.
bool BpeModel::EncodeInParts(std::string_view piece, BpeScratch* scratch, std::vector<uint32_t>* out) const {
  const auto* p = reinterpret_cast<const unsigned char*>(piece.data());
  const size_t n = piece.size();
  // Text whose characters all join (most words of alphabetic scripts) gives
  // up after a few boundaries, leaving the piece whole.
  constexpr size_t kGiveUpAfter = 4;
  WordCache& cache = ignore_merges_ ? scratch->segment_cache : scratch->cache;
  size_t part = 0;       // start of the current part
  size_t boundaries = 0;
  bool cut_any = false;
  char32_t left;
  size_t i = unicode::DecodeUtf8(p, p + n, &left);
  while (true) {
    size_t end = i;
    if (i < n) {
      char32_t right;
      const size_t len = unicode::DecodeUtf8(p + i, p + n, &right);
      const bool joins = boundaries_->CanJoin(left, right);
      left = right;
      i += len;
      if (joins) {
        if (!cut_any && ++boundaries >= kGiveUpAfter) return false;
        continue;
      }
    } else if (!cut_any) {
      return false;
    }
    cut_any = true;
    // The part [part, end).
    const std::string_view segment = piece.substr(part, end - part);
    char32_t first_cp;
    const size_t first_len = unicode::DecodeUtf8(p + part, p + end, &first_cp);
    if (first_len == segment.size()) {
      if (first_len == 1) {
        out->push_back(static_cast<uint32_t>(byte_ids_[p[part]]));
      } else if (!char_level_->AppendCharTokens(p + part, first_len, out)) {
        EncodeByMerges(segment, scratch, out);
      }
    } else {
      EncodeCached(segment, piece.data() + n, cache, out, [&](std::string_view s) { EncodeByMerges(s, scratch, out); });
    }
    if (end == n) return true;
    part = end;
  }
}

// EncodeInParts for a character-level model, whose pieces may be whole
// documents. A cut is an option, never a duty (not cutting is always exact),
// so it is sought where it is cheap: before a character that few others join
// (▁ in Llama-2 and Gemma 3), one table load; an ASCII character that many
// join is passed over at one byte-table load until the part reaches
// kProbeAfterBytes; any other pair is probed in the pair table when one side
// is CJK or beyond in the BMP or the part has grown long, so a text without
// spaces is still cut into short parts where it can be.
// HOT PATH for character-level models without a pre-tokenizer: every byte of
// a document passes here.
bool BpeModel::EncodeCharsInParts(std::string_view piece, BpeScratch* scratch, std::vector<uint32_t>* out) const {
  constexpr size_t kProbeAfterBytes = 48;
  const auto* p = reinterpret_cast<const unsigned char*>(piece.data());
  const size_t n = piece.size();
  WordCache& cache = ignore_merges_ ? scratch->segment_cache : scratch->cache;
  auto encode_part = [&](std::string_view segment) {
    if (segment.size() == 1 && byte_ids_[static_cast<unsigned char>(segment[0])] >= 0) {
      out->push_back(static_cast<uint32_t>(byte_ids_[static_cast<unsigned char>(segment[0])]));
    } else {
      EncodeCached(segment, piece.data() + n, cache, out, [&](std::string_view s) { MergeBytes(s, scratch, out); });
    }
  };
  size_t part = 0;  // start of the current part
  char32_t left;
  size_t i = unicode::DecodeUtf8(p, p + n, &left);
  while (i < n) {
    if (p[i] < 0x80 && ascii_joined_by_many_[p[i]] && i - part < kProbeAfterBytes) {
      left = p[i++];
      continue;
    }
    char32_t right;
    const size_t len = unicode::DecodeUtf8(p + i, p + n, &right);
    bool joins;
    const int quick = boundaries_->QuickCanJoin(left, right);
    if (quick >= 0) {
      joins = quick != 0;
    } else if (i - part < kProbeAfterBytes && (left | right) < 0x2E80) {
      joins = true;
    } else {
      joins = boundaries_->CanJoin(left, right);
    }
    if (!joins) {
      encode_part(piece.substr(part, i - part));
      part = i;
    }
    left = right;
    i += len;
  }
  if (part == 0) return false;  // no cut: the caller encodes the piece whole
  encode_part(piece.substr(part));
  return true;
}

void BpeModel::EncodePieceByteLevel(std::string_view piece, BpeScratch* scratch, std::vector<uint32_t>* out) const {
  if (piece.empty()) return;
  if (ignore_merges_) {
    if (auto id = bytes_index_.Find(piece)) {
      out->push_back(*id);
      return;
    }
  }
  MergeBytes(piece, scratch, out);
}

void BpeModel::MergeBytes(std::string_view piece, BpeScratch* scratch, std::vector<uint32_t>* out) const {
  scratch->symbols.clear();
  InitialSymbols(piece, &scratch->symbols);
  if (scratch->symbols.size() <= BpeScratch::kMediumLimit) {
    MergeShort(scratch);
  } else {
    MergeLong(scratch);
  }
  out->insert(out->end(), scratch->symbols.begin(), scratch->symbols.end());
}

void BpeModel::EncodeAndCache(std::string_view piece, const WordCache::Key& key, BpeScratch* scratch,
                              std::vector<uint32_t>* out) const {
  const size_t before = out->size();
  EncodeUncached(piece, scratch, /*use_cache=*/true, out);
  scratch->cache.Insert(piece, key, std::span<const uint32_t>(out->data() + before, out->size() - before));
}

}  // namespace tokenfeed::tokenizer
