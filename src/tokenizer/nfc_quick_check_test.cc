#include "tokenizer/nfc_quick_check.h"

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <utf8proc.h>

#include "base/utf8.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/pretokenize_testing.h"

namespace tokenfeed::tokenizer {
namespace {

// utf8proc's NFC of the whole text: what the normalizer computed before it
// had a quick check, and still computes for the parts the check rejects.
std::string WholeNfc(const std::string& text) {
  utf8proc_uint8_t* out = nullptr;
  const utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()), static_cast<utf8proc_ssize_t>(text.size()),
                   &out, static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  EXPECT_GE(n, 0);
  std::string s(reinterpret_cast<const char*>(out), static_cast<size_t>(n < 0 ? 0 : n));
  std::free(out);
  return s;
}

std::string Utf8(std::initializer_list<char32_t> cps) {
  std::string s;
  for (char32_t c : cps) AppendUtf8(c, &s);
  return s;
}

bool Assigned(char32_t cp) {
  return utf8proc_category(static_cast<utf8proc_int32_t>(cp)) != UTF8PROC_CATEGORY_CN;
}

TEST(NfcQuickCheckTest, KnownClasses) {
  EXPECT_EQ(NfcStableClass('a'), 0);
  EXPECT_EQ(NfcStableClass(0x00E9), 0);             // é: decomposes and composes back
  EXPECT_EQ(NfcStableClass(0x0439), 0);             // й
  EXPECT_EQ(NfcStableClass(0x304C), 0);             // が
  EXPECT_EQ(NfcStableClass(0xAC00), 0);             // 가
  EXPECT_EQ(NfcStableClass(0x094D), 9);             // Devanagari virama: a mark no pair takes
  EXPECT_EQ(NfcStableClass(0x0301), kNfcMayChange);  // combining acute: joins a letter before it
  EXPECT_EQ(NfcStableClass(0x093C), kNfcMayChange);  // Devanagari nukta
  EXPECT_EQ(NfcStableClass(0x1161), kNfcMayChange);  // Hangul vowel jamo
  EXPECT_EQ(NfcStableClass(0x11A7), kNfcMayChange);  // utf8proc joins it to an LV syllable
  EXPECT_EQ(NfcStableClass(0x212B), kNfcMayChange);  // ANGSTROM SIGN: a singleton, becomes U+00C5
  EXPECT_EQ(NfcStableClass(0x0958), kNfcMayChange);  // excluded from composition
  EXPECT_EQ(NfcStableClass(0x0344), kNfcMayChange);  // decomposes to two marks
  EXPECT_EQ(NfcStableClass(0x1F600), 0);
  EXPECT_EQ(NfcStableClass(0x110000), kNfcMayChange);
}

// Each character the check passes, in a few neighbourhoods, is its own NFC.
TEST(NfcQuickCheckTest, EveryPassedCharacterIsItsOwnNfcInContext) {
  size_t passed = 0, failures = 0;
  for (char32_t cp = 0x80; cp <= 0x10FFFF && failures < 5; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    const int plane = static_cast<int>(cp >> 16);
    if (plane >= 3 && plane != 14 && cp % 97 != 0) continue;
    const uint8_t c = NfcStableClass(cp);
    if (c == kNfcMayChange) continue;
    ++passed;
    const std::string texts[] = {Utf8({cp}), Utf8({'a', cp, 'b'}), Utf8({cp, cp}), Utf8({0xE9, cp}),
                                 Utf8({0x0915, cp, 0x094D}), Utf8({0xAC00, cp})};
    for (const std::string& t : texts) {
      // Only texts whose classes never decrease between starters pass.
      bool ordered = true;
      uint8_t last = 0;
      for (size_t i = 0; i < t.size();) {
        utf8proc_int32_t x;
        i += static_cast<size_t>(utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(t.data()) + i,
                                                  static_cast<utf8proc_ssize_t>(t.size() - i), &x));
        const uint8_t k = x < 0x80 ? 0 : NfcStableClass(static_cast<char32_t>(x));
        ordered = ordered && k != kNfcMayChange && (k == 0 || k >= last);
        last = k;
      }
      if (ordered && WholeNfc(t) != t) {
        ADD_FAILURE() << "U+" << std::hex << uint32_t{cp} << " passes the check but NFC changes its text";
        ++failures;
      }
    }
  }
  EXPECT_GT(passed, 200000u);
}

// The normalizer (check, then utf8proc on the stretches it rejects) against
// utf8proc on the whole text, for random text full of what NFC changes:
// precomposed letters, combining marks in and out of order, Hangul syllables
// and jamo, Devanagari with virama and nukta, Arabic with its marks,
// singletons and exclusions.
TEST(NfcQuickCheckTest, NormalizerEqualsWholeTextNfcOnRandomText) {
  std::vector<char32_t> pool = {'a', 'e', 'o', ' ', '.', 'A', 0xE9, 0xC5, 0x0439, 0x0438, 0x0306, 0x0301, 0x0300,
                                0x0323, 0x0316, 0x0327, 0x0308, 0x1E63, 0x0915, 0x0928, 0x093C, 0x094D, 0x093F,
                                0x0929, 0x0958, 0x1100, 0x1161, 0x11A7, 0x11A8, 0xAC00, 0xAC01, 0x0627, 0x0653, 0x0654,
                                0x064E, 0x0651, 0x0622, 0x212B, 0x2126, 0x0344, 0x0F73, 0x304B, 0x3099, 0x304C,
                                0x0B47, 0x0B3E, 0x0B4B, 0x1F600, 0x1D15E, 0x05D0, 0x05B7, 0x0E01, 0x0E48, 0x0E38};
  // And some of every kind, drawn from the whole range.
  std::mt19937 rng(17);
  for (int i = 0; i < 400; ++i) {
    char32_t cp = 0x80 + rng() % (0x2FFFF - 0x80);
    if ((cp >= 0xD800 && cp <= 0xDFFF) || !Assigned(cp)) continue;
    pool.push_back(cp);
  }
  for (char32_t cp = 0x0300; cp < 0x0370; ++cp) pool.push_back(cp);
  auto nfc = MakeUnicodeNormalizer(UnicodeForm::kNfc);
  std::string storage;
  size_t changed = 0;
  for (int round = 0; round < 100000; ++round) {
    std::string text;
    const size_t len = 1 + rng() % (round % 10 == 0 ? 60 : 12);
    for (size_t k = 0; k < len; ++k) AppendUtf8(pool[rng() % pool.size()], &text);
    const std::string want = WholeNfc(text);
    const std::string got(nfc->Normalize(text, &storage));
    ASSERT_EQ(got, want) << "text of " << text.size() << " bytes, round " << round;
    changed += want != text;
  }
  EXPECT_GT(changed, 20000u);  // the test reaches text that NFC changes
}

TEST(NfcQuickCheckTest, NormalizerEqualsWholeTextNfcOnTheCorpus) {
  std::string source;
  auto docs = testing::CorpusOrSample(&source, size_t{32} << 20);
  ASSERT_TRUE(docs.ok()) << docs.status().ToString();
  auto nfc = MakeUnicodeNormalizer(UnicodeForm::kNfc);
  std::string storage;
  for (const std::string& d : *docs) {
    ASSERT_EQ(std::string(nfc->Normalize(d, &storage)), WholeNfc(d)) << source << ": " << d.substr(0, 100);
  }
}

}  // namespace
}  // namespace tokenfeed::tokenizer
