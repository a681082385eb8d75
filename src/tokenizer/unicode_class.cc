#include "tokenizer/unicode_class.h"

namespace tokenfeed::tokenizer::unicode {

#include "tokenizer/unicode_class_table.inc"

namespace {

// kBmpClassMask's contents: the ASCII table below 0x80, the two levels above.
constexpr std::array<uint16_t, kBmpEnd> MakeBmpClassMask() {
  std::array<uint16_t, kBmpEnd> masks{};
  for (char32_t cp = 0; cp < kBmpEnd; ++cp) {
    if (cp < 0x80) {
      masks[cp] = kAsciiClassMask[cp];
      continue;
    }
    const uint32_t block = kClassBlockIndex[cp >> kClassBlockShift];
    masks[cp] = kMaskOfClass[kClassBlocks[(block << kClassBlockShift) | (cp & ((1u << kClassBlockShift) - 1))]];
  }
  return masks;
}

}  // namespace

// Made at compile time: constant-initialized, ready before any code runs.
alignas(64) constexpr std::array<uint16_t, kBmpEnd> kBmpClassMask = MakeBmpClassMask();

}  // namespace tokenfeed::tokenizer::unicode
