// Unicode character classes for the fast pre-tokenizer scanners: per code
// point a bitmask of the General_Category groups and the White_Space property
// behind Oniguruma's \p{L}, \p{M}, \p{N}, \p{P}, \p{S} and \s at the
// reference's Unicode version (16.0), and a UTF-8 decoding step. Not a general
// Unicode library (no case mapping, normalisation or scripts). Constant tables
// (unicode_class_table.inc, from scripts/gen_unicode_tables.py): thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tokenfeed::tokenizer::unicode {

// Bits of a class mask. A letter carries kLetter and exactly one of the five
// letter-category bits; a decimal digit carries kNumber and kDecimalNumber.
// kWhiteSpace is Oniguruma's \s (U+0009-000D, 0020, 0085, 00A0, 1680,
// 2000-200A, 2028, 2029, 202F, 205F, 3000).
enum ClassBit : uint16_t {
  kLetter = 1u << 0,            // \p{L}
  kUppercaseLetter = 1u << 1,   // \p{Lu}
  kLowercaseLetter = 1u << 2,   // \p{Ll}
  kTitlecaseLetter = 1u << 3,   // \p{Lt}
  kModifierLetter = 1u << 4,    // \p{Lm}
  kOtherLetter = 1u << 5,       // \p{Lo}
  kMark = 1u << 6,              // \p{M}
  kNumber = 1u << 7,            // \p{N}
  kDecimalNumber = 1u << 8,     // \p{Nd}
  kPunctuation = 1u << 9,       // \p{P}
  kSymbol = 1u << 10,           // \p{S}
  kWhiteSpace = 1u << 11,       // \s
  // Set only on ASCII code points, for the patterns' ASCII-only classes.
  kCrLf = 1u << 12,             // [\r\n]
  kAsciiLetter = 1u << 13,      // [A-Za-z]
  kAsciiPunctuation = 1u << 14, // [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~]
};

// Tables in unicode_class.cc. A code point >= 0x80 maps to a class number
// through two levels (kClassBlockIndex picks a block of 2^kClassBlockShift
// class numbers in kClassBlocks); the class number indexes kMaskOfClass.
// kBmpClassMask is the same answer for every code point below U+10000 in one
// load (128 KiB, made from the two levels when the library is compiled):
// nearly all text lives there, and the two dependent loads it saves per
// character are a large part of a scanner's cost on non-ASCII text.
inline constexpr int kClassBlockShift = 7;
using ClassBlockNumber = uint8_t;
inline constexpr char32_t kMaxCodePoint = 0x10FFFF;
inline constexpr char32_t kBmpEnd = 0x10000;
extern const uint16_t kAsciiClassMask[128];
extern const uint16_t kMaskOfClass[];
extern const ClassBlockNumber kClassBlockIndex[];
extern const uint8_t kClassBlocks[];
struct BmpClassMasks {
  uint16_t mask[kBmpEnd];
};
extern const BmpClassMasks kBmpClassMask;

// The class mask of a code point; 0 for a code point above U+10FFFF.
// Hot path: one load below U+10000, three above.
inline uint16_t ClassMaskOf(char32_t cp) {
  if (cp < kBmpEnd) return kBmpClassMask.mask[cp];
  if (cp > kMaxCodePoint) return 0;
  const uint32_t block = kClassBlockIndex[cp >> kClassBlockShift];
  return kMaskOfClass[kClassBlocks[(block << kClassBlockShift) | (cp & ((1u << kClassBlockShift) - 1))]];
}

// Decodes the character that starts at `p` (p < end) into `*cp` and returns
// its length in bytes. Exact for valid UTF-8, which is all the scanners get.
// On invalid bytes it never reads at or past `end` and never returns 0; the
// code point it reports there is unspecified (at most 0x1FFFFF).
// Hot path: the caller handles ASCII itself; this is the multi-byte step.
inline uint32_t DecodeMultibyteUtf8(const uint8_t* p, const uint8_t* end, char32_t* cp) {
  const uint32_t b0 = p[0];
  const size_t avail = static_cast<size_t>(end - p);
  if (b0 >= 0xF0) {
    if (avail >= 4) {
      *cp = ((b0 & 0x07) << 18) | ((p[1] & 0x3Fu) << 12) | ((p[2] & 0x3Fu) << 6) | (p[3] & 0x3Fu);
      return 4;
    }
  } else if (b0 >= 0xE0) {
    if (avail >= 3) {
      *cp = ((b0 & 0x0F) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu);
      return 3;
    }
  } else if (b0 >= 0xC0) {
    if (avail >= 2) {
      *cp = ((b0 & 0x1F) << 6) | (p[1] & 0x3Fu);
      return 2;
    }
  }
  *cp = b0;  // a stray continuation byte or a truncated sequence
  return 1;
}

inline uint32_t DecodeUtf8(const uint8_t* p, const uint8_t* end, char32_t* cp) {
  if (p[0] < 0x80) {
    *cp = p[0];
    return 1;
  }
  return DecodeMultibyteUtf8(p, end, cp);
}

// One decoded character: its code point, byte length and class mask.
struct CharInfo {
  char32_t cp;
  uint32_t len;
  uint16_t mask;
};

// Hot path: decode and classify the character at `p` (p < end).
inline CharInfo CharAt(const uint8_t* p, const uint8_t* end) {
  CharInfo c;
  if (p[0] < 0x80) {
    c.cp = p[0];
    c.len = 1;
    c.mask = kAsciiClassMask[p[0]];
    return c;
  }
  c.len = DecodeMultibyteUtf8(p, end, &c.cp);
  c.mask = ClassMaskOf(c.cp);
  return c;
}

}  // namespace tokenfeed::tokenizer::unicode
