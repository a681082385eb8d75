// NFC quick check: per code point, whether Unicode normalization form C (as
// utf8proc computes it) can leave the character as it is whatever surrounds
// it, and with which canonical combining class -- the idea of UAX #15's
// NFC_Quick_Check = Yes, derived from utf8proc's own tables so that it agrees
// with the normalizer that runs when the check fails. Not a normalizer.
// The table is built once per process on first use; then read-only, safe
// from any thread.
#pragma once

#include <cstdint>

namespace tokenfeed::tokenizer {

inline constexpr uint8_t kNfcMayChange = 255;

// kNfcMayChange for a code point that NFC may change or combine with what
// precedes it (a composition exclusion, a singleton, the second part of a
// composable pair, a Hangul vowel or final jamo, a character whose
// decomposition starts with such a part); else its canonical combining class
// (0 for a starter). Text of such characters whose non-zero classes never
// decrease between two starters is its own NFC; and NFC of text that is cut
// just before a starter (class 0) is NFC of each side.
uint8_t NfcStableClass(char32_t cp);

}  // namespace tokenfeed::tokenizer
