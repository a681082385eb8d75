// The byte-level alphabet of GPT-2-style BPE: a bijection between the 256
// byte values and 256 printable code points, used by tokenizer.json files to
// spell byte strings as text ("Ġ" is the space byte 0x20). tokenfeed works on
// raw bytes internally and uses this table only at load time (to turn vocab
// and merges back into bytes) and when decoding.
// constexpr tables: no state, no thread-safety concerns.
#pragma once

#include <array>
#include <cstdint>

namespace tokenfeed::tokenizer {

struct ByteLevelAlphabet {
  static constexpr char32_t kCharLimit = 0x100 + 68;  // every alphabet code point is below this

  std::array<char32_t, 256> byte_to_char{};
  std::array<int16_t, kCharLimit> char_to_byte{};

  constexpr ByteLevelAlphabet() {
    for (auto& b : char_to_byte) b = -1;
    // Printable Latin-1 bytes keep their own code point; the other 68 bytes
    // map, in increasing order, to U+0100, U+0101, ...
    char32_t next = 0x100;
    for (int b = 0; b < 256; ++b) {
      bool keeps = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      byte_to_char[b] = keeps ? static_cast<char32_t>(b) : next++;
      char_to_byte[byte_to_char[b]] = static_cast<int16_t>(b);
    }
  }

  // The byte spelled by code point `c`, or -1 if `c` is not in the alphabet.
  constexpr int CharToByte(char32_t c) const { return c < kCharLimit ? char_to_byte[c] : -1; }
};

inline constexpr ByteLevelAlphabet kByteLevelAlphabet{};

}  // namespace tokenfeed::tokenizer
