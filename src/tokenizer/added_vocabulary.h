// AddedVocabulary: the "added_tokens" of a tokenizer.json (special tokens such
// as <|endoftext|> and plain added tokens), found in text before
// pre-tokenization exactly as the reference finds them: leftmost-longest
// matches, with the single_word, lstrip and rstrip rules; tokens marked
// "normalized" are matched in normalized text, the others in the raw text.
// Immutable after construction: Split may run on many threads at once.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/normalizer.h"

namespace tokenfeed::tokenizer {

struct AddedTokenSpec {
  uint32_t id = 0;
  std::string content;
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = false;
  bool special = false;
};

// A piece of text after added-token splitting: either an added token (id
// set) or plain text to normalize / pre-tokenize.
struct AddedSplit {
  uint32_t begin;
  uint32_t end;
  int64_t id;  // -1 for plain text
};

// One set of patterns (the raw or the normalized ones) in a byte trie.
class AddedTokenMatcher {
 public:
  AddedTokenMatcher() = default;
  // `patterns[i]` is matched for `tokens[i]`.
  AddedTokenMatcher(std::vector<std::string> patterns, std::vector<const AddedTokenSpec*> tokens);

  bool empty() const { return tokens_.empty(); }

  // Appends the splits of `text`, covering it in order (no empty splits,
  // except one empty plain split for empty text, which callers drop).
  // `skip_special`: special tokens are not matched (the text stays plain).
  // HOT PATH: a first-byte filter skips text that cannot start a token.
  void Split(std::string_view text, bool skip_special, std::vector<AddedSplit>* out) const;

 private:
  struct Node {
    std::vector<std::pair<unsigned char, uint32_t>> children;  // sorted by byte
    int32_t token = -1;                                        // index into tokens_
  };
  int32_t LongestMatchAt(std::string_view text, size_t pos, size_t* len) const;

  std::vector<Node> nodes_;
  std::vector<const AddedTokenSpec*> tokens_;
  bool first_byte_[256] = {};
  int single_first_byte_ = -1;  // when every pattern starts with the same byte
};

class AddedVocabulary {
 public:
  // `normalizer` (may be null) gives the normalized form of "normalized" tokens.
  AddedVocabulary(std::vector<AddedTokenSpec> tokens, const Normalizer* normalizer);
  AddedVocabulary(const AddedVocabulary&) = delete;
  AddedVocabulary& operator=(const AddedVocabulary&) = delete;

  const AddedTokenMatcher& raw_matcher() const { return raw_; }
  const AddedTokenMatcher& normalized_matcher() const { return normalized_; }

  const AddedTokenSpec* FindById(uint32_t id) const;
  const AddedTokenSpec* FindByContent(std::string_view content) const;
  const std::vector<AddedTokenSpec>& tokens() const { return tokens_; }

 private:
  std::vector<AddedTokenSpec> tokens_;
  std::unordered_map<uint32_t, size_t> by_id_;
  std::unordered_map<std::string_view, size_t> by_content_;
  AddedTokenMatcher raw_;
  AddedTokenMatcher normalized_;
};

}  // namespace tokenfeed::tokenizer
