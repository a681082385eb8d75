#include "tokenizer/nfc_quick_check.h"

#include <cstdlib>
#include <cstring>
#include <vector>

#include <utf8proc.h>

namespace tokenfeed::tokenizer {
namespace {

constexpr utf8proc_option_t kNfcOptions = static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE);

// Hangul vowel and final jamo: utf8proc composes L+V and LV+T by arithmetic,
// outside its composition table -- and takes U+11A7, the base of the finals,
// for one too (it joins an LV syllable and vanishes).
bool IsHangulVowelOrFinal(char32_t cp) { return (cp >= 0x1161 && cp <= 0x1175) || (cp >= 0x11A7 && cp <= 0x11C2); }
bool IsHangulSyllable(char32_t cp) { return cp >= 0xAC00 && cp <= 0xD7A3; }

// Whether utf8proc's composition can join `cp` to a character before it: the
// second part of a pair in its table, or a Hangul vowel or final.
bool CanComposeBackwards(char32_t cp) {
  if (IsHangulVowelOrFinal(cp)) return true;
  const utf8proc_property_t* p = utf8proc_get_property(static_cast<utf8proc_int32_t>(cp));
  return p->comb_index != UINT16_MAX && p->comb_index >= 0x8000;
}

bool NfcOfOneIsItself(char32_t cp) {
  utf8proc_uint8_t in[4];
  const utf8proc_ssize_t len = utf8proc_encode_char(static_cast<utf8proc_int32_t>(cp), in);
  utf8proc_uint8_t* out = nullptr;
  const utf8proc_ssize_t n = utf8proc_map(in, len, &out, kNfcOptions);
  const bool same = n == len && std::memcmp(in, out, static_cast<size_t>(len)) == 0;
  std::free(out);
  return same;
}

uint8_t Classify(char32_t cp) {
  if (cp >= 0xD800 && cp <= 0xDFFF) return kNfcMayChange;  // never in valid UTF-8
  if (CanComposeBackwards(cp)) return kNfcMayChange;
  const utf8proc_property_t* p = utf8proc_get_property(static_cast<utf8proc_int32_t>(cp));
  const bool canonical = (p->decomp_seqindex != UINT16_MAX && p->decomp_type == 0) || IsHangulSyllable(cp);
  if (canonical) {
    // NFC decomposes it and composes it again: it must come back whole, and
    // the first part of its decomposition must not join what precedes.
    utf8proc_int32_t parts[16];
    int boundclass = 0;
    const utf8proc_ssize_t n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(cp), parts, 16,
                                                        UTF8PROC_DECOMPOSE, &boundclass);
    if (n <= 0 || n > 16 || CanComposeBackwards(static_cast<char32_t>(parts[0]))) return kNfcMayChange;
    if (!NfcOfOneIsItself(cp)) return kNfcMayChange;
  }
  return p->combining_class < kNfcMayChange ? static_cast<uint8_t>(p->combining_class) : kNfcMayChange;
}

}  // namespace

uint8_t NfcStableClass(char32_t cp) {
  // The Basic Multilingual Plane from a table; the rest (emoji, historic
  // scripts) is rarer and looked up each time.
  static const std::vector<uint8_t>* const bmp = [] {
    auto* t = new std::vector<uint8_t>(0x10000);
    for (char32_t c = 0; c < 0x10000; ++c) (*t)[c] = Classify(c);
    return t;
  }();
  if (cp < 0x10000) return (*bmp)[cp];
  if (cp > 0x10FFFF) return kNfcMayChange;
  return Classify(cp);
}

}  // namespace tokenfeed::tokenizer
