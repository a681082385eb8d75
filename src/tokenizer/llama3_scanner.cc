// The scanner of the tiktoken-style pattern that Llama-3, Qwen2 and cl100k
// share (kLlama3Pattern, kQwen2Pattern, kCl100kPattern in fast_matchers.h):
//
//   A1 (?i:'s|'t|'re|'ve|'m|'ll|'d)
//   A2 [^\r\n\p{L}\p{N}]?\p{L}+
//   A3 \p{N}{1,3}            (Qwen2: \p{N})
//   A4  ?[^\s\p{L}\p{N}]+[\r\n]*
//   A5 \s*[\r\n]+
//   A6 \s+(?!\S)
//   A7 \s+
//
// Why one hand-written scanner matches Oniguruma here: every character is in
// exactly one of \p{L}, \p{N}, \s and "other" (none of the three), and at each
// position some alternative matches (L: A2; N: A3; other: A2 or A4; \s: A7),
// so matches are never empty and each starts where the previous one ended.
// At a position the first alternative that matches wins (leftmost-first), and
// each one's greedy-with-backtracking result has a closed form:
//   - A1 needs an apostrophe; the letters fold as Oniguruma folds them, which
//     an exhaustive query over all code points shows is only ASCII case plus
//     U+017F (long s) for 's'.
//   - A2's optional prefix can take one character that is neither CR, LF, a
//     letter nor a number, and only when a letter follows it; a letter itself
//     starts the letter run.
//   - A4's optional space is taken only when an "other" character follows.
//   - A5-A7: MatchWhiteSpaceTail (char_class_runs.h).
// cl100k's possessive forms change nothing: [^\r\n\p{L}\p{N}]?+ cannot give
// back a character that \p{L}+ could use, [^\s\p{L}\p{N}]++ is followed by
// CR/LF, which it cannot take, and \s*[\r\n] ends at the last CR/LF of the
// \s run exactly as \s*[\r\n]+ does.
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

// Length in bytes of the A1 match that follows an apostrophe at p[-1], or 0.
// (?i:s) also matches U+017F LATIN SMALL LETTER LONG S (UTF-8 C5 BF).
inline uint32_t ContractionLength(const uint8_t* p, const uint8_t* end) {
  if (p == end) return 0;
  switch (*p) {
    case 's': case 'S': case 't': case 'T': case 'm': case 'M': case 'd': case 'D':
      return 1;
    case 'r': case 'R': case 'v': case 'V':
      return (end - p >= 2 && (p[1] | 0x20) == 'e') ? 2 : 0;
    case 'l': case 'L':
      return (end - p >= 2 && (p[1] | 0x20) == 'l') ? 2 : 0;
    case 0xC5:
      return (end - p >= 2 && p[1] == 0xBF) ? 2 : 0;
    default:
      return 0;
  }
}

// The matches tile the text (the comment above says why).
template <int kMaxDigits>
class Llama3Scanner final : public TilingScanner<Llama3Scanner<kMaxDigits>> {
 public:
  explicit Llama3Scanner(std::string_view name) : name_(name) {}

  std::string_view name() const override { return name_; }

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
      if (c0.mask & kLetter) {
        p = SkipWhileAny(next, end, kLetter);  // A2 without prefix
      } else if (c0.mask & kNumber) {
        p = next;  // A3
        for (int i = 1; i < kMaxDigits && p < end; ++i) {
          const CharInfo c = CharAt(p, end);
          if (!(c.mask & kNumber)) break;
          p += c.len;
        }
      } else if (c0.mask & kWhiteSpace) {
        p = nullptr;
        if (next < end) {
          const CharInfo c1 = CharAt(next, end);
          if ((c1.mask & kLetter) && !(c0.mask & kCrLf)) {
            p = SkipWhileAny(next + c1.len, end, kLetter);  // A2 with a space-like prefix
          } else if (c0.cp == ' ' && !(c1.mask & kLetterNumberSpace)) {
            p = SkipCrLf(SkipWhileNone(next + c1.len, end, kLetterNumberSpace), end);  // A4
          }
        }
        if (p == nullptr) p = MatchWhiteSpaceTail<true>(start, end);  // A5-A7
      } else {
        // "Other": neither letter, number nor space.
        uint32_t contraction = 0;
        if (c0.cp == '\'') contraction = ContractionLength(next, end);
        if (contraction != 0) {
          p = next + contraction;  // A1
        } else {
          const CharInfo c1 = next < end ? CharAt(next, end) : CharInfo{0, 0, 0};
          if (c1.mask & kLetter) {
            p = SkipWhileAny(next + c1.len, end, kLetter);  // A2 with a prefix
          } else {
            p = SkipCrLf(SkipWhileNone(next, end, kLetterNumberSpace), end);  // A4
          }
        }
      }
      match(start, p);
    }
  }

  std::string_view name_;
};

}  // namespace

std::unique_ptr<SplitMatcher> MakeLlama3Scanner() {
  return std::make_unique<Llama3Scanner<3>>("fast:llama3");
}
std::unique_ptr<SplitMatcher> MakeQwen2Scanner() {
  return std::make_unique<Llama3Scanner<1>>("fast:qwen2");
}
std::unique_ptr<SplitMatcher> MakeCl100kScanner() {
  return std::make_unique<Llama3Scanner<3>>("fast:cl100k");
}

}  // namespace tokenfeed::tokenizer
