#include "tokenizer/deepseek_pretokenizer.h"

#include <cstdint>

#include "tokenizer/deepseek_scan.h"
#include "tokenizer/unicode_class.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tokenfeed::tokenizer {
namespace {

// The first byte at or after `p` that is not ASCII or is an ASCII digit.
// HOT PATH for ASCII text: 16 bytes at a time.
inline const uint8_t* SkipAsciiNonDigits(const uint8_t* p, const uint8_t* end) {
#if defined(__SSE2__)
  const __m128i below_zero = _mm_set1_epi8('0' - 1), above_nine = _mm_set1_epi8('9' + 1);
  while (end - p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    // Bytes of 0x80 and above are negative as signed bytes: the sign mask.
    const __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, below_zero), _mm_cmplt_epi8(v, above_nine));
    const uint32_t stop = static_cast<uint32_t>(_mm_movemask_epi8(_mm_or_si128(digit, v)));
    if (stop != 0) return p + __builtin_ctz(stop);
    p += 16;
  }
#endif
  while (p < end && *p < 0x80 && static_cast<unsigned>(*p - '0') >= 10u) ++p;
  return p;
}

}  // namespace

// Why one pass gives the staged result: stage 1 leaves the \p{N}{1,3} groups
// and the maximal runs between them; stage 2 cuts each such run into maximal
// runs of its characters and maximal runs of the others (none of its
// characters is \p{N}). A digit group then passes stage 2 whole, and stage 3
// too (\p{N} characters start no match, and no letter or mark follows one
// inside the group). So the final pieces are: each digit group, and stage 3's
// matches and gaps within each maximal run of CJK characters and within each
// maximal run of characters that are neither \p{N} nor CJK -- each run being
// stage 3's whole subject, as in the reference.
void SplitDeepSeekV3(std::string_view text, std::vector<std::string_view>* pieces) {
  using namespace unicode;  // NOLINT: the class bits read better unqualified here
  const uint8_t* const begin = reinterpret_cast<const uint8_t*>(text.data());
  const uint8_t* const end = begin + text.size();
  auto emit = [pieces](const uint8_t* from, const uint8_t* to) {
    pieces->emplace_back(reinterpret_cast<const char*>(from), static_cast<size_t>(to - from));
  };
  // Stage 3 on one subject: its matches, and the gaps between them.
  auto split_main = [&emit](const uint8_t* from, const uint8_t* to) {
    const uint8_t* prev = from;
    deepseek::ScanMain(from, to, [&](const uint8_t* m_from, const uint8_t* m_to) {
      if (m_from != prev) emit(prev, m_from);
      emit(m_from, m_to);  // never empty: every alternative takes a character
      prev = m_to;
    });
    if (prev != to) emit(prev, to);
  };
  const uint8_t* p = begin;
  while (p < end) {
    // A run of characters that are neither \p{N} nor CJK.
    const uint8_t* const run = p;
    CharInfo c{0, 0, 0};
    while (p < end) {
      if (*p < 0x80) {
        p = SkipAsciiNonDigits(p, end);
        if (p == end || (*p < 0x80 && static_cast<unsigned>(*p - '0') < 10u)) break;
        continue;
      }
      c = CharAt(p, end);
      if ((c.mask & kNumber) || deepseek::IsCjk(c.cp)) break;
      p += c.len;
    }
    if (p != run) split_main(run, p);
    if (p == end) break;
    if (*p < 0x80) c = CharAt(p, end);  // an ASCII digit ended the run
    if (c.mask & kNumber) {
      const uint8_t* const group_end = deepseek::DigitGroupEnd(p, end, c.len);
      emit(p, group_end);
      p = group_end;
      continue;
    }
    // A run of CJK characters: all three bytes long, lead bytes E3-E9. When
    // every one is a letter or a mark, stage 3 takes the run as one match.
    bool letters_marks = (c.mask & deepseek::kLetterMark) != 0;
    const uint8_t* q = p + c.len;
    while (q < end && *q >= 0xE3 && *q <= 0xE9) {
      char32_t cp;
      const uint32_t len = DecodeMultibyteUtf8(q, end, &cp);
      if (!deepseek::IsCjk(cp)) break;
      // U+4E00-U+9FA5 are all letters (unicode_class_test checks it).
      if (cp < 0x4E00) letters_marks = letters_marks && (ClassMaskOf(cp) & deepseek::kLetterMark) != 0;
      q += len;
    }
    if (letters_marks) {
      emit(p, q);
    } else {
      split_main(p, q);
    }
    p = q;
  }
}

}  // namespace tokenfeed::tokenizer
