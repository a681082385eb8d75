// Normalizers of a tokenizer.json ("normalizer" section): NFC, NFD, NFKC,
// NFKD, Lowercase, Strip, Replace, Prepend and Sequence of them, with the
// reference's semantics on valid UTF-8. Unicode forms come from utf8proc; a
// quick check skips text that a form would leave unchanged, so the common
// case costs one scan and no copy.
// Immutable after construction: Normalize may run on many threads at once.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenfeed/status.h"
#include "tokenizer/split_matcher.h"

namespace tokenfeed::tokenizer {

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  // Returns the normalized text: `text` itself when nothing changes, else a
  // view of `*storage`, which the call may overwrite.
  virtual std::string_view Normalize(std::string_view text, std::string* storage) const = 0;
  virtual std::string Describe() const = 0;
};

enum class UnicodeForm { kNfc, kNfd, kNfkc, kNfkd };

std::unique_ptr<Normalizer> MakeUnicodeNormalizer(UnicodeForm form);
std::unique_ptr<Normalizer> MakeLowercaseNormalizer();
std::unique_ptr<Normalizer> MakeStripNormalizer(bool left, bool right);
std::unique_ptr<Normalizer> MakePrependNormalizer(std::string prefix);
// Replaces every match of `pattern` (a literal or a regex matcher) by `content`.
std::unique_ptr<Normalizer> MakeReplaceNormalizer(std::unique_ptr<SplitMatcher> pattern, std::string content);
std::unique_ptr<Normalizer> MakeSequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> steps);

}  // namespace tokenfeed::tokenizer
