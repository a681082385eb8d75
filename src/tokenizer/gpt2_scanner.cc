// The scanner of GPT-2's ByteLevel pattern (kByteLevelPattern):
//
//   C1 's|'t|'re|'ve|'m|'ll|'d      (case-sensitive)
//   C2  ?\p{L}+
//   C3  ?\p{N}+
//   C4  ?[^\s\p{L}\p{N}]+
//   C5 \s+(?!\S)
//   C6 \s+
//
// Why it matches Oniguruma: every character is in exactly one of \p{L},
// \p{N}, \s and "other", and at each position some alternative matches, so
// matches are never empty and each starts where the previous one ended. The
// optional space of C2-C4 is taken only when the next character has the run's
// class (otherwise backtracking drops it and the run cannot start at the
// space). C5-C6: MatchWhiteSpaceTail (char_class_runs.h).
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "tokenizer/char_class_runs.h"
#include "tokenizer/fast_matchers.h"
#include "tokenizer/split_matcher.h"
#include "tokenizer/unicode_class.h"

namespace tokenfeed::tokenizer {
namespace {

using namespace unicode;  // NOLINT: the class bits read better unqualified here

constexpr uint16_t kLetterNumberSpace = kLetter | kNumber | kWhiteSpace;

// Length in bytes of the C1 match that follows an apostrophe at p[-1], or 0.
inline uint32_t ContractionLength(const uint8_t* p, const uint8_t* end) {
  if (p == end) return 0;
  switch (*p) {
    case 's': case 't': case 'm': case 'd':
      return 1;
    case 'r': case 'v':
      return (end - p >= 2 && p[1] == 'e') ? 2 : 0;
    case 'l':
      return (end - p >= 2 && p[1] == 'l') ? 2 : 0;
    default:
      return 0;
  }
}

// The end of the run of C2, C3 or C4 (by the class of its first character c).
inline const uint8_t* SkipRunOfClass(const CharInfo& c, const uint8_t* after_c, const uint8_t* end) {
  if (c.mask & kLetter) return SkipWhileAny(after_c, end, kLetter);
  if (c.mask & kNumber) return SkipWhileAny(after_c, end, kNumber);
  return SkipWhileNone(after_c, end, kLetterNumberSpace);
}

// Every position starts a match (C1-C6 between them take any character), so
// the matches tile the text.
class Gpt2Scanner final : public TilingScanner<Gpt2Scanner> {
 public:
  std::string_view name() const override { return "fast:gpt2"; }

  // Calls match(from, to) for each match in order. Hot path.
  template <typename OnMatch>
  static void Scan(std::string_view text, OnMatch&& match) {
    const uint8_t* const begin = reinterpret_cast<const uint8_t*>(text.data());
    const uint8_t* const end = begin + text.size();
    const uint8_t* p = begin;
    while (p < end) {
      const uint8_t* const start = p;
      const CharInfo c0 = CharAt(p, end);
      const uint8_t* const next = p + c0.len;
      if (c0.mask & kWhiteSpace) {
        p = nullptr;
        if (c0.cp == ' ' && next < end) {
          const CharInfo c1 = CharAt(next, end);
          if (!(c1.mask & kWhiteSpace)) p = SkipRunOfClass(c1, next + c1.len, end);  // C2-C4
        }
        if (p == nullptr) p = MatchWhiteSpaceTail<false>(start, end);  // C5-C6
      } else {
        uint32_t contraction = 0;
        if (c0.cp == '\'') contraction = ContractionLength(next, end);
        p = contraction != 0 ? next + contraction : SkipRunOfClass(c0, next, end);  // C1 or C2-C4
      }
      match(start, p);
    }
  }
};

}  // namespace

std::unique_ptr<SplitMatcher> MakeGpt2Scanner() { return std::make_unique<Gpt2Scanner>(); }

}  // namespace tokenfeed::tokenizer
