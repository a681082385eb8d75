#include "tokenizer/unicode_class.h"

namespace tokenfeed::tokenizer::unicode {

#include "tokenizer/unicode_class_table.inc"

namespace {

// kBmpClassMask's contents: the ASCII table below 0x80, the two levels above.
// Evaluated by the compiler: 65,536 iterations, within GCC's constexpr loop
// limit (262,144) and, at about 600 K steps, Clang's step limit (1,048,576).
constexpr BmpClassMasks MakeBmpClassMask() {
  BmpClassMasks masks{};
  for (char32_t cp = 0; cp < kBmpEnd; ++cp) {
    if (cp < 0x80) {
      masks.mask[cp] = kAsciiClassMask[cp];
      continue;
    }
    const uint32_t block = kClassBlockIndex[cp >> kClassBlockShift];
    masks.mask[cp] = kMaskOfClass[kClassBlocks[(block << kClassBlockShift) | (cp & ((1u << kClassBlockShift) - 1))]];
  }
  return masks;
}

}  // namespace

// Made at compile time: constant-initialized, ready before any code runs.
alignas(64) constexpr BmpClassMasks kBmpClassMask = MakeBmpClassMask();

}  // namespace tokenfeed::tokenizer::unicode
