// BpeModel: the BPE model of a tokenizer.json ("model": {"type": "BPE"}): the
// vocabulary, the merge rules and the merge algorithm. Its result for any
// piece equals the reference's: pairs are merged lowest rank first, leftmost
// first among equal ranks. Two spellings of the vocabulary: byte-level (GPT-2
// style, each byte one character of the byte-level alphabet) and character
// level (SentencePiece style: tokens are plain UTF-8, each character of a
// piece starts as its own token, else as its bytes' <0xNN> tokens
// (byte_fallback), else as the unknown token, fused when fuse_unk).
// It is not the pre-tokenizer or the added-token handling (tokenizer.cc).
// Immutable after Build: EncodePiece may run on many threads at once, each
// with its own BpeScratch.
#pragma once

#include <cassert>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenfeed/status.h"
#include "tokenizer/char_level_bpe.h"
#include "tokenizer/merge_boundaries.h"
#include "tokenizer/merge_table.h"
#include "tokenizer/token_index.h"
#include "tokenizer/word_cache.h"

namespace tokenfeed::tokenizer {

// The "model" section of a tokenizer.json, as parsed (token texts exactly as
// the file spells them).
struct BpeSpec {
  // Whether token texts are spelled in the byte-level alphabet (the
  // tokenizer has a ByteLevel pre-tokenizer); else they are plain UTF-8.
  bool byte_level = true;
  std::vector<std::pair<std::string, uint32_t>> vocab;
  std::vector<std::pair<std::string, std::string>> merges;
  std::optional<std::string> unk_token;
  std::string continuing_subword_prefix;
  std::string end_of_word_suffix;
  bool fuse_unk = false;
  bool byte_fallback = false;
  bool ignore_merges = false;
};

// Per-thread working memory for the merge loop and the word cache.
struct BpeScratch {
  // Pieces of up to this many symbols take the array path; positions must
  // fit in a byte there.
  static constexpr size_t kMediumLimit = 255;
  static constexpr size_t kBlock = 16;
  explicit BpeScratch(size_t cache_entries = WordCache::kDefaultMaxEntries) : cache(cache_entries) {}
  WordCache cache;
  // Results of parts of pieces (MergeBoundaries) for models with
  // ignore_merges, where a part's merge result may differ from what the
  // whole-word rule gives the same bytes as a piece.
  WordCache segment_cache{1 << 12};
  std::vector<uint32_t> symbols;
  alignas(64) int32_t keys[256];
  int32_t block_min[256 / kBlock];
  uint8_t next[kMediumLimit];
  uint8_t prev[kMediumLimit];
  struct Node {
    uint32_t id;
    int32_t prev;
    int32_t next;
  };
  std::vector<Node> nodes;
  struct HeapEntry {
    uint32_t rank;
    uint32_t pos;
    uint32_t merged_id;
  };
  std::vector<HeapEntry> heap;
};

class BpeModel {
 public:
  static Result<BpeModel> Build(const BpeSpec& spec);

  // Appends the ids of `piece` (raw bytes) to `out` (tests; the encoder
  // makes keys ahead and calls EncodeKeyedPiece).
  void EncodePiece(std::string_view piece, BpeScratch* scratch, std::vector<uint32_t>* out) const {
    EncodeKeyedPiece(piece, ProbesWordCache(piece) ? WordCache::MakeKey(piece) : WordCache::Key{}, scratch, out);
  }
  // The same with the key PrefetchPiece returned for `piece`: a key of
  // zeros (length 0) for a piece that is not looked up in the cache, so that
  // one compare tells the two kinds apart.
  // HOT PATH: the cache probe inline, the merge loop out of line on a miss.
  void EncodeKeyedPiece(std::string_view piece, const WordCache::Key& key, BpeScratch* scratch,
                        std::vector<uint32_t>* out) const {
    assert(key.len == (ProbesWordCache(piece) ? piece.size() : 0));
    if (key.len != 0) {
      std::span<const uint32_t> hit;
      if (scratch->cache.Find(piece, key, &hit)) {
        if (hit.size() == 1) {
          out->push_back(hit[0]);
        } else {
          out->insert(out->end(), hit.begin(), hit.end());
        }
        return;
      }
      EncodeAndCache(piece, key, scratch, out);
      return;
    }
    if (!piece.empty()) EncodeUncached(piece, scratch, /*use_cache=*/true, out);
  }

  // A hint that EncodeKeyedPiece(piece) comes soon: the CPU fetches the piece's
  // word-cache slot ahead. Changes no result. Returns the piece's key, for
  // EncodeKeyedPiece (a Key of zeros for a piece it does not probe for).
  // `padded` as for WordCache::MakeKey.
  WordCache::Key PrefetchPiece(std::string_view piece, bool padded, BpeScratch* scratch) const {
    if (!ProbesWordCache(piece)) return WordCache::Key{};
    const WordCache::Key key = WordCache::MakeKey(piece, padded);
    scratch->cache.Prefetch(key);
    return key;
  }

  // The same without the cache (tests compare the two).
  void EncodePieceUncached(std::string_view piece, BpeScratch* scratch, std::vector<uint32_t>* out) const;
  // Without the cache, the character-level shortcut and cutting: the plain
  // merge loop over the whole piece (tests compare it with the shortcuts;
  // for a character-level model the loop starts from characters).
  void EncodePieceByteLevel(std::string_view piece, BpeScratch* scratch, std::vector<uint32_t>* out) const;

  // The bytes token `id` stands for. Byte-level: what the ByteLevel decoder
  // turns it into (its bytes when every character of its text is in the
  // byte-level alphabet, its text otherwise); character level: its text.
  // Empty for an id the vocabulary does not have.
  std::string_view DecodedBytes(uint32_t id) const;
  // Whether the vocabulary has a token with this id.
  bool HasId(uint32_t id) const;
  // The token's text as tokenizer.json spells it.
  std::string_view TokenText(uint32_t id) const;
  std::optional<uint32_t> TextToId(std::string_view text) const;

  // One past the largest id in the vocabulary.
  uint32_t id_limit() const { return static_cast<uint32_t>(text_offsets_.size()); }
  size_t vocab_size() const { return vocab_size_; }
  size_t merge_count() const { return merges_.size(); }
  size_t memory_bytes() const;
  bool byte_level() const { return byte_level_; }

 private:
  // Appends the initial symbols of `piece` (one per byte, or per character
  // for a character-level vocabulary, after prefixes, suffixes, byte
  // fallback and unknown handling) to `symbols`.
  void InitialSymbols(std::string_view piece, std::vector<uint32_t>* symbols) const;
  void InitialCharSymbols(std::string_view piece, std::vector<uint32_t>* symbols) const;
  // Byte fallback: appends the <0xNN> tokens of every byte of `s` and
  // returns true, or appends nothing and returns false when byte fallback is
  // off or a byte has no such token.
  bool AppendByteFallback(std::string_view s, std::vector<uint32_t>* symbols) const;
  // Whether MergeBoundaries' cuts are exact for this character-level model.
  bool CharBoundariesAreExact(const std::vector<MergeTable::Rule>& rules) const;
  // A cache miss: encodes `piece` and caches its ids under `key`.
  void EncodeAndCache(std::string_view piece, const WordCache::Key& key, BpeScratch* scratch,
                      std::vector<uint32_t>* out) const;
  // EncodePieceUncached, looking parts of a multi-byte piece up in the
  // scratch's caches when `use_cache`.
  void EncodeUncached(std::string_view piece, BpeScratch* scratch, bool use_cache, std::vector<uint32_t>* out) const;
  // The merge loop alone (no ignore_merges rule): the character-level
  // shortcut where it applies, the byte-level loop otherwise.
  void EncodeByMerges(std::string_view piece, BpeScratch* scratch, std::vector<uint32_t>* out) const;
  void MergeBytes(std::string_view piece, BpeScratch* scratch, std::vector<uint32_t>* out) const;
  // Cuts a multi-byte piece where no merge can join (MergeBoundaries) and
  // encodes the parts through the cache; false (appending nothing) when
  // there is nothing worth cutting (byte-level models).
  bool EncodeInParts(std::string_view piece, BpeScratch* scratch, std::vector<uint32_t>* out) const;
  // The same for a character-level model, where it never gives up.
  bool EncodeCharsInParts(std::string_view piece, BpeScratch* scratch, std::vector<uint32_t>* out) const;
  // A part of a piece through `cache`: its cached ids, or `encode`(part)
  // appended to *out and cached (parts longer than the cache takes are
  // encoded only). `piece_end`: the end of the piece it is part of, up to
  // where its key may read. HOT PATH: inlined into both cutting loops.
  template <typename Encode>
  void EncodeCached(std::string_view part, const char* piece_end, WordCache& cache, std::vector<uint32_t>* out,
                    Encode&& encode) const {
    if (part.size() > WordCache::kMaxWordBytes) {
      encode(part);
      return;
    }
    const WordCache::Key key = WordCache::MakeKey(part, piece_end - part.data() >= 16);
    std::span<const uint32_t> hit;
    if (cache.Find(part, key, &hit)) {
      out->insert(out->end(), hit.begin(), hit.end());
      return;
    }
    const size_t before = out->size();
    encode(part);
    cache.Insert(part, key, std::span<const uint32_t>(out->data() + before, out->size() - before));
  }
  void MergeSmall(BpeScratch* scratch) const;
  void MergeShort(BpeScratch* scratch) const;
  void MergeLong(BpeScratch* scratch) const;
  // The pieces EncodePiece looks up in the word cache: 1 to kMaxWordBytes
  // bytes. Single bytes too, though their id is one load from byte_ids_:
  // text mixes them with words at random, and one path for both saves the
  // mispredicted branch between them (docs/tokenizer.md).
  bool ProbesWordCache(std::string_view piece) const {
    return piece.size() - 1 < WordCache::kMaxWordBytes;
  }

  MergeTable merges_;
  std::shared_ptr<const CharLevelBpe> char_level_;  // null when the shortcut does not apply
  std::shared_ptr<const MergeBoundaries> boundaries_;  // likewise
  TokenIndex bytes_index_;  // raw bytes -> id, for tokens spelled in the alphabet
  TokenIndex text_index_;   // tokenizer.json text -> id
  std::string text_arena_;
  std::vector<std::pair<uint32_t, uint32_t>> text_offsets_;   // by id: offset, length (UINT32_MAX: no token)
  std::string bytes_arena_;
  std::vector<std::pair<uint32_t, uint32_t>> bytes_offsets_;  // by id: what DecodedBytes returns
  int64_t byte_ids_[256];  // id of each single byte (character level: ASCII character), -1 if none
  bool simple_bytes_ = true;  // every byte has an id and there are no prefixes/suffixes
  std::optional<uint32_t> unk_id_;
  bool fuse_unk_ = false;
  bool byte_fallback_ = false;
  bool ignore_merges_ = false;
  bool byte_level_ = true;
  std::string continuing_subword_prefix_;
  std::string end_of_word_suffix_;
  int64_t byte_fallback_ids_[256];
  bool ascii_joined_by_many_[128] = {};  // character level: QuickCanJoin cannot settle it
  std::vector<uint32_t> bmp_ids_;  // character level: id of each 2-3 byte character's token, UINT32_MAX if none
  size_t vocab_size_ = 0;
};

}  // namespace tokenfeed::tokenizer
