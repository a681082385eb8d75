// The building blocks of the fast pre-tokenizer scanners: inline steps that
// walk valid UTF-8 by character class (unicode_class.h) and return where a
// run of some class ends, plus the whitespace alternatives that the GPT-2,
// Llama-3 and DeepSeek patterns share. Not a matcher on its own.
// Pure functions over [p, end): safe on any thread. They never read at or past
// `end`, whatever the bytes, and always return a pointer in [p, end].
#pragma once

#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "tokenizer/unicode_class.h"

namespace tokenfeed::tokenizer::unicode {

// [A-Za-z]*
// Hot path (words of Latin-script text): 16 bytes at a time while 16 remain.
inline const uint8_t* SkipAsciiLetters(const uint8_t* p, const uint8_t* end) {
#if defined(__SSE2__)
  // (b | 0x20) - 'a' < 26, unsigned, as a signed compare after flipping the top bit.
  const __m128i lower = _mm_set1_epi8(0x20), shift = _mm_set1_epi8(static_cast<char>(0x80 - 'a'));
  const __m128i limit = _mm_set1_epi8(static_cast<char>(-128 + 26));
  while (end - p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i letter = _mm_cmplt_epi8(_mm_add_epi8(_mm_or_si128(v, lower), shift), limit);
    const uint32_t other = ~static_cast<uint32_t>(_mm_movemask_epi8(letter)) & 0xFFFF;
    if (other != 0) return p + __builtin_ctz(other);
    p += 16;
  }
#endif
  while (p < end && *p < 0x80 && (kAsciiClassMask[*p] & kAsciiLetter)) ++p;
  return p;
}

// A subject-end test that never fires: the default of the steps below that
// take one. A scanner whose subject ends before some characters (DeepSeek-V3's
// main pattern, fused with the stages that cut its subjects) passes its own.
// Asked with a non-ASCII code point inside a run, or with the character at
// `p` (p < end) after a whitespace run.
struct NeverEnds {
  bool operator()(char32_t /*non_ascii_cp*/) const { return false; }
  bool operator()(const uint8_t* /*p*/, const uint8_t* /*end*/) const { return false; }
};

// Hot path: the end of the run of characters from `p` whose class mask has at
// least one bit of `bits` (e.g. \p{L}+, [\p{L}\p{M}]+). The run also ends at
// a non-ASCII character for which `ends(cp)` holds.
template <typename EndsAt = NeverEnds>
inline const uint8_t* SkipWhileAny(const uint8_t* p, const uint8_t* end, uint16_t bits, EndsAt ends = {}) {
  // The only ASCII letters and marks are A-Za-z (unicode_class_test checks it).
  const bool letters = bits == kLetter || bits == (kLetter | kMark);
  while (p < end) {
    if (*p < 0x80) {
      if (letters) {
        p = SkipAsciiLetters(p, end);
        if (p == end || *p < 0x80) break;
        continue;
      }
      if (!(kAsciiClassMask[*p] & bits)) break;
      ++p;
      continue;
    }
    char32_t cp;
    const uint32_t len = DecodeMultibyteUtf8(p, end, &cp);
    if (!(ClassMaskOf(cp) & bits) || ends(cp)) break;
    p += len;
  }
  return p;
}

// Hot path: the end of the run of characters from `p` whose class mask has no
// bit of `bits` (e.g. [^\s\p{L}\p{N}]+ with bits = kWhiteSpace|kLetter|kNumber).
inline const uint8_t* SkipWhileNone(const uint8_t* p, const uint8_t* end, uint16_t bits) {
  while (p < end) {
    if (*p < 0x80) {
      if (kAsciiClassMask[*p] & bits) break;
      ++p;
      continue;
    }
    char32_t cp;
    const uint32_t len = DecodeMultibyteUtf8(p, end, &cp);
    if (ClassMaskOf(cp) & bits) break;
    p += len;
  }
  return p;
}

// [\r\n]*
inline const uint8_t* SkipCrLf(const uint8_t* p, const uint8_t* end) {
  while (p < end && (*p == '\r' || *p == '\n')) ++p;
  return p;
}


// The whitespace tail shared by the patterns, at `start`, which holds a \s
// character:
//   kWithNewlineRule:  \s*[\r\n]+|\s+(?!\S)|\s+   (Llama-3, Qwen2, DeepSeek)
//   otherwise:         \s+(?!\S)|\s+              (GPT-2)
// Returns the end of the match. With R the maximal \s run from `start`:
// \s*[\r\n]+ backtracks \s* to the last CR or LF inside R and ends just after
// it; \s+(?!\S) is all of R when R reaches the subject's end, else R less its
// last character (when R has two or more); \s+ is all of R. The subject ends
// at `end`, or where `ends_at(p, end)` holds for the character at p after R
// (p < end).
template <bool kWithNewlineRule, typename EndsAt = NeverEnds>
inline const uint8_t* MatchWhiteSpaceTail(const uint8_t* start, const uint8_t* end, EndsAt ends_at = {}) {
  const uint8_t* p = start;
  const uint8_t* last_char = start;        // start of R's last character
  const uint8_t* after_last_crlf = nullptr;
  while (p < end) {
    if (*p < 0x80) {
      const uint16_t mask = kAsciiClassMask[*p];
      if (!(mask & kWhiteSpace)) break;
      if (kWithNewlineRule && (mask & kCrLf)) after_last_crlf = p + 1;
      last_char = p;
      ++p;
      continue;
    }
    char32_t cp;
    const uint32_t len = DecodeMultibyteUtf8(p, end, &cp);
    if (!(ClassMaskOf(cp) & kWhiteSpace)) break;
    last_char = p;
    p += len;
  }
  if (kWithNewlineRule && after_last_crlf != nullptr) return after_last_crlf;
  // R of one character is all of the match either way: no need to ask ends_at.
  if (p == end || last_char == start || ends_at(p, end)) return p;
  return last_char;
}

}  // namespace tokenfeed::tokenizer::unicode
