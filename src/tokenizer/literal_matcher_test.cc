// The literal matcher against what the reference runs for a Split "String"
// pattern: Oniguruma on the Rust-regex-escaped string.
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tokenizer/pretokenize_testing.h"
#include "tokenizer/split_matcher.h"

namespace tokenfeed::tokenizer {
namespace {

// regex::escape of the Rust regex crate: a backslash before each of its meta
// characters.
std::string RustRegexEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::string_view("\\.+*?()|[]{}^$#&-~").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

void ExpectSameAsReference(std::string_view literal, std::string_view text) {
  auto reference = MakeRegexMatcher(RustRegexEscape(literal));
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();
  std::vector<Span> want;
  (*reference)->FindMatches(text, &want);
  std::vector<Span> got;
  MakeLiteralMatcher(literal)->FindMatches(text, &got);
  ASSERT_EQ(got, want) << "literal \"" << literal << "\" in \"" << text << "\"\n got "
                       << testing::DescribeSpans(text, got) << "\nwant " << testing::DescribeSpans(text, want);
}

TEST(LiteralMatcherTest, MetaCharactersAreLiteral) {
  for (const char* lit : {".", "a.b", "(", ")", "\\", "$", "^", "[x]", "|", "~", "#", "&", "-", "*", "+", "?",
                          "{2}", " ", "\n", "\r\n", "..."}) {
    ExpectSameAsReference(lit, "a.b (x) \\ $5 ^[x]| ~#&- *+? {2} a{2} \r\n...\n. ..");
  }
}

TEST(LiteralMatcherTest, OverlappingOccurrencesAreLeftmostFirst) {
  std::vector<Span> got;
  MakeLiteralMatcher("aa")->FindMatches("aaaaa", &got);
  const std::vector<Span> want = {{0, 2}, {2, 4}};
  EXPECT_EQ(got, want);
  ExpectSameAsReference("aa", "aaaaa");
  ExpectSameAsReference("aba", "ababababa");
}

TEST(LiteralMatcherTest, EmptyLiteralMatchesAtEveryCharacterBoundary) {
  // As the reference: Split("") isolates every character.
  ExpectSameAsReference("", "ab c");
  ExpectSameAsReference("", "\u00e9\u4e2d\U0001F600");
  ExpectSameAsReference("", "");
  std::vector<Span> got;
  MakeLiteralMatcher("")->FindMatches("a\u00e9", &got);
  const std::vector<Span> want = {{0, 0}, {1, 1}, {3, 3}};
  EXPECT_EQ(got, want);
}

TEST(LiteralMatcherTest, RandomLiteralsAgreeWithTheReference) {
  std::mt19937_64 rng(20240601);
  for (int i = 0; i < 300; ++i) {
    const std::string text = testing::RandomText(rng, 1 + rng() % 60);
    const std::vector<uint32_t> b = testing::CharBoundaries(text);
    // A literal cut from the text itself (so it occurs), or from another text.
    const size_t from = rng() % b.size();
    const size_t to = std::min(b.size() - 1, from + rng() % 4);
    std::string literal = text.substr(b[from], b[to] - b[from]);
    if (i % 3 == 0) literal = testing::RandomText(rng, 1 + rng() % 2);
    ExpectSameAsReference(literal, text + literal + text);
  }
}

}  // namespace
}  // namespace tokenfeed::tokenizer
