// The scanning steps of DeepSeek-V3's three pre-tokenizer patterns, as
// inline functions over valid UTF-8 [p, end) (fast_matchers.h has the
// patterns; deepseek_scanner.cc says why each step equals Oniguruma):
// shared by the per-stage scanners and by the fused pass that cuts text into
// the final pieces of all three stages at once (deepseek_pretokenizer.h).
// Pure functions: safe on any thread; they never read at or past `end`.
#pragma once

#include <cstdint>
#include <type_traits>

#include "tokenizer/char_class_runs.h"
#include "tokenizer/unicode_class.h"

namespace tokenfeed::tokenizer::deepseek {

using namespace unicode;  // NOLINT: the class bits read better unqualified here

// Stage 2's characters: U+4E00-U+9FA5, U+3040-U+309F and U+30A0-U+30FF.
inline bool IsCjk(char32_t cp) { return (cp >= 0x4E00 && cp <= 0x9FA5) || (cp >= 0x3040 && cp <= 0x30FF); }

// Stage 1 at a \p{N} character: the end of \p{N}{1,3} from `p`.
inline const uint8_t* DigitGroupEnd(const uint8_t* p, const uint8_t* end, uint32_t first_len) {
  p += first_len;
  for (int i = 1; i < 3 && p < end; ++i) {
    const CharInfo c = CharAt(p, end);
    if (!(c.mask & kNumber)) break;
    p += c.len;
  }
  return p;
}

inline constexpr uint16_t kLetterMark = kLetter | kMark;
inline constexpr uint16_t kPunctSymbol = kPunctuation | kSymbol;

// Where stage 3's subjects end in the fused pass: stages 1 and 2 leave as
// subjects the maximal runs with no \p{N} and no CJK character, so either
// character ends one. Asked with a code point inside a run of letters and
// marks or of punctuation and symbols, where no \p{N} character can be, and
// with the character after a whitespace run.
struct EndsAtNumberOrCjk {
  bool operator()(char32_t non_ascii_cp) const { return IsCjk(non_ascii_cp); }
  bool operator()(const uint8_t* p, const uint8_t* end) const {
    const CharInfo c = CharAt(p, end);
    return (c.mask & kNumber) || IsCjk(c.cp);
  }
};

// Stage 3: calls match(from, to) for each successive match of the main
// pattern in the subject [begin, end), in order. Characters that start no
// match are skipped (they are the gaps of an Isolated split).
// With kFused, the subject is instead [begin, the first \p{N} or CJK
// character or `end`): the scan stops there and returns where it stopped, so
// that the fused pass reads each character once. Without, it returns `end`.
// HOT PATH.
template <bool kFused = false, typename OnMatch>
inline const uint8_t* ScanMain(const uint8_t* const begin, const uint8_t* const end, OnMatch&& match) {
  using Ends = std::conditional_t<kFused, EndsAtNumberOrCjk, NeverEnds>;
  const Ends ends{};
  // A letter or mark that continues a run in this subject.
  auto continues = [ends](const CharInfo& c) { return (c.mask & kLetterMark) && !ends(c.cp); };
  const uint8_t* p = begin;
  while (p < end) {
    const uint8_t* const start = p;
    const CharInfo c0 = CharAt(p, end);
    // The subject's end (EndsAtNumberOrCjk, written out: as a call it cost
    // 1 % more instructions here).
    if (kFused && ((c0.mask & kNumber) || IsCjk(c0.cp))) return p;
    const uint8_t* const next = p + c0.len;
    if (c0.mask & kLetterMark) {
      p = SkipWhileAny(next, end, kLetterMark, ends);  // B2 without prefix
    } else if (c0.mask & kPunctSymbol) {
      if ((c0.mask & kAsciiPunctuation) && next < end && *next < 0x80 && (kAsciiClassMask[*next] & kAsciiLetter)) {
        p = SkipAsciiLetters(next + 1, end);  // B1
      } else {
        p = SkipCrLf(SkipWhileAny(next, end, kPunctSymbol, ends), end);  // B3
      }
    } else if (c0.mask & kWhiteSpace) {
      p = nullptr;
      if (next < end) {
        const CharInfo c1 = CharAt(next, end);
        if (continues(c1) && !(c0.mask & kCrLf)) {
          p = SkipWhileAny(next + c1.len, end, kLetterMark, ends);  // B2 with a space-like prefix
        } else if (c0.cp == ' ' && (c1.mask & kPunctSymbol) && !ends(c1.cp)) {
          p = SkipCrLf(SkipWhileAny(next + c1.len, end, kPunctSymbol, ends), end);  // B3
        }
      }
      if (p == nullptr) p = MatchWhiteSpaceTail<true>(start, end, ends);  // B4-B6
    } else {
      // Number, control, format, private use, unassigned: only B2 with a prefix.
      const CharInfo c1 = next < end ? CharAt(next, end) : CharInfo{0, 0, 0};
      if (!continues(c1)) {
        p = next;  // no match starts here
        continue;
      }
      p = SkipWhileAny(next + c1.len, end, kLetterMark, ends);
    }
    match(start, p);
  }
  return end;
}

}  // namespace tokenfeed::tokenizer::deepseek
