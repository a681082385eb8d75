#include "tokenizer/unicode_class.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tokenizer/pretokenize_testing.h"
#include "tokenizer/split_matcher.h"

namespace tokenfeed::tokenizer::unicode {
namespace {

using testing::EncodeUtf8;

bool IsSurrogate(char32_t cp) { return cp >= 0xD800 && cp <= 0xDFFF; }

// Every scalar value, in order, as one UTF-8 string, with the code point that
// starts at each byte offset.
struct AllCodePoints {
  std::string text;
  std::vector<char32_t> cp_at;  // indexed by byte offset; only starts are meaningful
};

const AllCodePoints& All() {
  static const AllCodePoints* all = [] {
    auto* a = new AllCodePoints;
    for (char32_t cp = 0; cp <= kMaxCodePoint; ++cp) {
      if (IsSurrogate(cp)) continue;
      a->cp_at.resize(a->text.size() + 1);
      a->cp_at[a->text.size()] = cp;
      a->text += EncodeUtf8(cp);
    }
    return a;
  }();
  return *all;
}

// The code points that Oniguruma's `char_class` (a one-character pattern)
// matches, found by running it over every code point.
std::vector<bool> OnigMembers(const std::string& char_class) {
  auto matcher = MakeRegexMatcher(char_class);
  EXPECT_TRUE(matcher.ok()) << matcher.status().ToString();
  std::vector<bool> members(kMaxCodePoint + 1, false);
  if (!matcher.ok()) return members;
  std::vector<Span> spans;
  (*matcher)->FindMatches(All().text, &spans);
  for (const Span& s : spans) {
    EXPECT_EQ(s.end - s.begin, EncodeUtf8(All().cp_at[s.begin]).size()) << char_class;
    members[All().cp_at[s.begin]] = true;
  }
  return members;
}

struct ClassCase {
  const char* name;  // for the test name
  const char* onig_class;
  uint16_t bit;
};

class ClassAgainstOniguruma : public ::testing::TestWithParam<ClassCase> {};

// The proof that the tables are Oniguruma's classes: all 1,112,064 scalar
// values, one class at a time.
TEST_P(ClassAgainstOniguruma, EveryCodePointAgrees) {
  const ClassCase& c = GetParam();
  const std::vector<bool> members = OnigMembers(c.onig_class);
  size_t mismatches = 0;
  size_t count = 0;
  for (char32_t cp = 0; cp <= kMaxCodePoint; ++cp) {
    if (IsSurrogate(cp)) continue;
    const bool ours = (ClassMaskOf(cp) & c.bit) != 0;
    count += ours;
    if (ours != members[cp] && ++mismatches <= 10) {
      ADD_FAILURE() << c.onig_class << " U+" << std::hex << uint32_t(cp) << ": table says " << ours
                    << ", Oniguruma says " << members[cp];
    }
  }
  EXPECT_EQ(mismatches, 0u);
  EXPECT_GT(count, 0u) << "a class with no member compares nothing";
}

INSTANTIATE_TEST_SUITE_P(
    AllClasses, ClassAgainstOniguruma,
    ::testing::Values(ClassCase{"L", R"(\p{L})", kLetter}, ClassCase{"Lu", R"(\p{Lu})", kUppercaseLetter},
                      ClassCase{"Ll", R"(\p{Ll})", kLowercaseLetter}, ClassCase{"Lt", R"(\p{Lt})", kTitlecaseLetter},
                      ClassCase{"Lm", R"(\p{Lm})", kModifierLetter}, ClassCase{"Lo", R"(\p{Lo})", kOtherLetter},
                      ClassCase{"M", R"(\p{M})", kMark}, ClassCase{"N", R"(\p{N})", kNumber},
                      ClassCase{"Nd", R"(\p{Nd})", kDecimalNumber}, ClassCase{"P", R"(\p{P})", kPunctuation},
                      ClassCase{"S", R"(\p{S})", kSymbol}, ClassCase{"WhiteSpace", R"(\s)", kWhiteSpace},
                      ClassCase{"CrLf", "[\r\n]", kCrLf}, ClassCase{"AsciiLetter", "[A-Za-z]", kAsciiLetter},
                      ClassCase{"AsciiPunctuation", R"([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])", kAsciiPunctuation}),
    [](const ::testing::TestParamInfo<ClassCase>& param_info) { return std::string(param_info.param.name); });

TEST(UnicodeClassTest, WhiteSpaceIsExactlyTheListedCodePoints) {
  std::vector<char32_t> ws;
  for (char32_t cp = 0; cp <= kMaxCodePoint; ++cp) {
    if (!IsSurrogate(cp) && (ClassMaskOf(cp) & kWhiteSpace)) ws.push_back(cp);
  }
  const std::vector<char32_t> want = {0x09,   0x0A,   0x0B,   0x0C,   0x0D,   0x20,   0x85,
                                      0xA0,   0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004,
                                      0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A, 0x2028,
                                      0x2029, 0x202F, 0x205F, 0x3000};
  EXPECT_EQ(ws, want);
}

TEST(UnicodeClassTest, Unicode16LetterIsPresent) {
  // U+1C89 CYRILLIC CAPITAL LETTER TJE, new in Unicode 16.0.
  EXPECT_EQ(ClassMaskOf(0x1C89), kLetter | kUppercaseLetter);
  EXPECT_EQ(ClassMaskOf(0x110000), 0);
  EXPECT_EQ(ClassMaskOf(0x1FFFFF), 0);
}

// ClassMaskOf answers below U+10000 from the one-load table and above it
// from the two levels; the two must agree on every code point of the plane
// (and on the ASCII bits below 0x80), or a scanner's class would depend on
// which path a character took.
TEST(UnicodeClassTest, OneLoadTableEqualsTheTwoLevels) {
  for (char32_t cp = 0; cp < kBmpEnd; ++cp) {
    uint16_t want;
    if (cp < 0x80) {
      want = kAsciiClassMask[cp];
    } else {
      const uint32_t block = kClassBlockIndex[cp >> kClassBlockShift];
      want = kMaskOfClass[kClassBlocks[(block << kClassBlockShift) | (cp & ((1u << kClassBlockShift) - 1))]];
    }
    ASSERT_EQ(kBmpClassMask.mask[cp], want) << std::hex << uint32_t{cp};
    ASSERT_EQ(ClassMaskOf(cp), want) << std::hex << uint32_t{cp};
  }
  // Letters on both sides of the boundary: U+FF21 FULLWIDTH LATIN CAPITAL
  // LETTER A below it, U+10400 DESERET CAPITAL LETTER LONG I above it.
  EXPECT_EQ(ClassMaskOf(0xFF21), kLetter | kUppercaseLetter);
  EXPECT_EQ(ClassMaskOf(0x10400), kLetter | kUppercaseLetter);
}

// The fused DeepSeek-V3 pre-tokenizer takes a run of CJK ideographs as one
// letter run without looking each one up (deepseek_pretokenizer.cc).
TEST(UnicodeClassTest, DeepSeekIdeographRangeIsAllLetters) {
  for (char32_t cp = 0x4E00; cp <= 0x9FA5; ++cp) ASSERT_TRUE(ClassMaskOf(cp) & kLetter) << std::hex << uint32_t{cp};
}

// The scanners skip ASCII letter runs 16 bytes at a time (char_class_runs.h).
TEST(UnicodeClassTest, OnlyAsciiLettersAreAsciiLettersOrMarks) {
  for (char32_t cp = 0; cp < 0x80; ++cp) {
    const bool az = (cp >= 'A' && cp <= 'Z') || (cp >= 'a' && cp <= 'z');
    EXPECT_EQ((ClassMaskOf(cp) & (kLetter | kMark)) != 0, az) << uint32_t{cp};
    EXPECT_EQ((ClassMaskOf(cp) & kAsciiLetter) != 0, az) << uint32_t{cp};
  }
}

TEST(UnicodeClassTest, DecodesEveryCodePoint) {
  for (char32_t cp = 0; cp <= kMaxCodePoint; ++cp) {
    if (IsSurrogate(cp)) continue;
    const std::string s = EncodeUtf8(cp);
    const auto* p = reinterpret_cast<const uint8_t*>(s.data());
    char32_t got = 0;
    ASSERT_EQ(DecodeUtf8(p, p + s.size(), &got), s.size()) << std::hex << uint32_t(cp);
    ASSERT_EQ(got, cp);
    const CharInfo info = CharAt(p, p + s.size());
    ASSERT_EQ(info.cp, cp);
    ASSERT_EQ(info.len, s.size());
    ASSERT_EQ(info.mask, ClassMaskOf(cp));
  }
}

TEST(UnicodeClassTest, InvalidBytesNeverReadPastTheEnd) {
  // Every lead byte with every shorter tail: the length stays within the bytes.
  for (int lead = 0x80; lead <= 0xFF; ++lead) {
    for (size_t avail = 1; avail <= 4; ++avail) {
      std::vector<uint8_t> bytes(avail, 0x80);
      bytes[0] = static_cast<uint8_t>(lead);
      char32_t cp = 0;
      const uint32_t len = DecodeUtf8(bytes.data(), bytes.data() + avail, &cp);
      EXPECT_GE(len, 1u);
      EXPECT_LE(len, avail) << std::hex << lead;
      EXPECT_LE(cp, 0x1FFFFFu);
    }
  }
}

}  // namespace
}  // namespace tokenfeed::tokenizer::unicode
