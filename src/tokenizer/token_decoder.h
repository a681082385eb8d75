// TokenDecoder: the "decoder" section of a tokenizer.json -- the chain that
// turns token texts back into text: Replace, ByteFallback (<0xNN> tokens to
// bytes), Fuse, Strip, Metaspace, ByteLevel, and a Sequence of them, each
// with the reference's decode_chain semantics; the final text is the
// chain's output joined without separators.
// It is not id lookup (the tokenizer gives it token texts) and not encoding.
// Immutable after construction: Decode may run on many threads at once.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/split_matcher.h"

namespace tokenfeed::tokenizer {

struct DecoderStep {
  enum class Kind { kReplace, kByteFallback, kFuse, kStrip, kMetaspace, kByteLevel };
  Kind kind = Kind::kFuse;
  // kReplace: every match of `pattern` in a token becomes `content`.
  std::shared_ptr<const SplitMatcher> pattern;
  std::string content;
  // kStrip: up to `start` leading and `stop` trailing `strip_char`s go;
  // kMetaspace: `strip_char` is the replacement that becomes ' ' (dropped in
  // the first token unless `prepend_never`).
  char32_t strip_char = U' ';
  size_t start = 0;
  size_t stop = 0;
  bool prepend_never = false;
};

class TokenDecoder {
 public:
  explicit TokenDecoder(std::vector<DecoderStep> steps) : steps_(std::move(steps)) {}

  // The decoded text of `tokens` (token texts, in order). The result is
  // valid UTF-8 when the token texts are.
  std::string Decode(std::vector<std::string> tokens) const;

 private:
  std::vector<DecoderStep> steps_;
};

// What the ByteLevel decoder makes of one token's text: its bytes when every
// character is in the byte-level alphabet, the text itself otherwise.
std::string ByteLevelTokenBytes(std::string_view text);

}  // namespace tokenfeed::tokenizer
