#include "tokenizer/deepseek_pretokenizer.h"

#include <cstdint>
#include <type_traits>

#include "tokenizer/deepseek_scan.h"
#include "tokenizer/unicode_class.h"

namespace tokenfeed::tokenizer {

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
  // Stage 3 on the subject from `from` to the first \p{N} or CJK character
  // (or `to`): its matches, and the gaps between them. Returns the subject's end.
  auto split_main = [&emit](const uint8_t* from, const uint8_t* to, auto fused) {
    const uint8_t* prev = from;
    const uint8_t* const subject_end =
        deepseek::ScanMain<decltype(fused)::value>(from, to, [&](const uint8_t* m_from, const uint8_t* m_to) {
          if (m_from != prev) emit(prev, m_from);
          emit(m_from, m_to);  // never empty: every alternative takes a character
          prev = m_to;
        });
    if (prev != subject_end) emit(prev, subject_end);
    return subject_end;
  };
  const uint8_t* p = begin;
  while (p < end) {
    // A run of characters that are neither \p{N} nor CJK, cut by stage 3 as
    // it is read: it ends at the first \p{N} or CJK character.
    p = split_main(p, end, std::true_type{});
    if (p == end) break;
    const CharInfo c = CharAt(p, end);
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
      split_main(p, q, std::false_type{});
    }
    p = q;
  }
}

}  // namespace tokenfeed::tokenizer
