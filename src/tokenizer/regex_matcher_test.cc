// The general path: Oniguruma with the reference's syntax and find_iter rules.
// Expected spans marked "reference" were produced by HF tokenizers 0.23.3
// (Split pre-tokenizer, Regex pattern) on the same input.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tokenizer/pretokenize_testing.h"
#include "tokenizer/split_matcher.h"

namespace tokenfeed::tokenizer {
namespace {

std::vector<Span> Matches(std::string_view pattern, std::string_view text) {
  auto matcher = MakeRegexMatcher(pattern);
  EXPECT_TRUE(matcher.ok()) << matcher.status().ToString();
  std::vector<Span> spans;
  if (matcher.ok()) (*matcher)->FindMatches(text, &spans);
  return spans;
}

std::vector<std::string> Texts(std::string_view text, const std::vector<Span>& spans) {
  std::vector<std::string> out;
  for (const Span& s : spans) out.emplace_back(text.substr(s.begin, s.end - s.begin));
  return out;
}

TEST(RegexMatcherTest, EmptyMatchRightAfterAMatchIsSkipped) {
  // find_iter: x* matches empty at 0 and 1, then "xx"; the empty match at 4
  // (where "xx" ended) is skipped, the one at the very end is not.
  const std::vector<Span> want = {{0, 0}, {1, 1}, {2, 4}, {5, 5}};
  EXPECT_EQ(Matches("x*", "abxxc"), want);
}

TEST(RegexMatcherTest, EmptyPatternMatchesAtEveryCharacterBoundary) {
  const std::vector<Span> want = {{0, 0}, {2, 2}, {5, 5}, {9, 9}, {10, 10}};
  EXPECT_EQ(Matches("", "\u00e9\u4e2d\U0001F600a"), want);
  const std::vector<Span> at_end = {{0, 0}};
  EXPECT_EQ(Matches("", ""), at_end);
}

TEST(RegexMatcherTest, LookBehindSeesTextBeforeTheSearchStart) {
  const std::vector<Span> want = {{0, 1}, {1, 2}};  // reference: "a", "b"
  EXPECT_EQ(Matches("(?<=a)b|a", "ab"), want);
}

TEST(RegexMatcherTest, UsesOnigurumaSyntaxLikeTheReference) {
  // \N (not a newline) exists in ONIG_SYNTAX_ONIGURUMA, not in Ruby's.
  const std::vector<Span> non_newline = {{0, 1}, {1, 2}, {3, 4}, {4, 5}};
  EXPECT_EQ(Matches(R"(\N)", "ab\ncd"), non_newline);
  // (?y{g}) and variable-length look-behind compile there (reference: they do).
  EXPECT_TRUE(MakeRegexMatcher("(?y{g})a").ok());
  const std::vector<Span> none;
  EXPECT_EQ(Matches("(?<=a+)b", "aNb\nc"), none);  // reference: no match
  const std::vector<Span> one = {{2, 3}};
  EXPECT_EQ(Matches("(?<=a+)b", "aab"), one);
}

TEST(RegexMatcherTest, LlamaPatternMatchesTheReference) {
  const std::string pattern =
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  struct Case {
    std::string text;
    std::vector<std::string> want;  // reference
  };
  const std::vector<Case> cases = {
      {"a   b", {"a", "  ", " b"}},
      {"it's HE'S I'M we'Re o'\u017f 'x",
       {"it", "'s", " HE", "'S", " I", "'M", " we", "'Re", " o", "'\u017f", " '", "x"}},
      {"a \n\n  b", {"a", " \n\n", " ", " b"}},
      {"12345 x", {"123", "45", " x"}},
      {" .com", {" .", "com"}},
      {"a\u00a0b \u3000c", {"a", "\u00a0b", " ", "\u3000c"}},
      {"x  \n ", {"x", "  \n", " "}},
      {"\t\tword", {"\t", "\tword"}},
  };
  for (const Case& c : cases) EXPECT_EQ(Texts(c.text, Matches(pattern, c.text)), c.want) << c.text;
}

TEST(RegexMatcherTest, PatternThatDoesNotCompileIsAnError) {
  for (const char* bad : {"(", "[a-\\d]", "(?s).", "*a", "\\p{NoSuchProperty}"}) {
    auto matcher = MakeRegexMatcher(bad);
    ASSERT_FALSE(matcher.ok()) << bad;
    EXPECT_EQ(matcher.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(matcher.status().message().find(bad), std::string::npos) << matcher.status().message();
    EXPECT_NE(matcher.status().message().find("tokenizer.json"), std::string::npos);
  }
  auto range = MakeRegexMatcher("[a-\\d]");
  EXPECT_NE(range.status().message().find("char-class value at end of range"), std::string::npos)
      << range.status().message();
}

TEST(RegexMatcherTest, BacktrackLimitPerMatchIsTheReferencesAndFailsWithOnigurumasMessage) {
  // The first alternative fails after about n*n/2 = 12.5 million backtracks,
  // past Oniguruma's default limit of 10 million per match attempt, which the
  // reference keeps: it fails on this text, and so does the general path,
  // whatever the installed Oniguruma takes 0 to mean.
  const std::string text = std::string(5000, ' ') + "b";
  auto matcher = MakeRegexMatcher(R"(\A(?:\s*\s*[\r\n]|\s+))", "t.json: pre_tokenizer.pattern.Regex");
  ASSERT_TRUE(matcher.ok());
  std::vector<Span> spans;
  try {
    (*matcher)->FindMatches(text, &spans);
    FAIL() << "expected a RegexSearchError";
  } catch (const RegexSearchError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("t.json: pre_tokenizer.pattern.Regex"), std::string::npos) << what;
    EXPECT_NE(what.find("retry-limit-in-match over"), std::string::npos) << what;
    EXPECT_NE(what.find("at byte 0 of a piece of 5001 bytes"), std::string::npos) << what;
  }
  // Just under the limit (n*n/2 = 8 million) it matches, as the reference does.
  const std::string shorter = std::string(4000, ' ') + "b";
  const std::vector<Span> want = {{0, 4000}};
  EXPECT_EQ(Matches(R"(\A(?:\s*\s*[\r\n]|\s+))", shorter), want);
}

TEST(RegexMatcherTest, ExponentialBacktrackingIsBoundedInTime) {
  // (a|aa)+$ takes about 6.7x longer per 4 more bytes before a 'b'. Blocks of
  // 30 'a's stay below the per-attempt limit, so without the per-search and
  // time bounds this text would take hours.
  std::string text;
  for (int i = 0; i < 2000; ++i) text += std::string(30, 'a') + "b";
  auto matcher = MakeRegexMatcher("(a|aa)+$", "exp.json: pre_tokenizer.pattern.Regex");
  ASSERT_TRUE(matcher.ok());
  const auto start = std::chrono::steady_clock::now();
  std::vector<Span> spans;
  EXPECT_THROW((*matcher)->FindMatches(text, &spans), RegexSearchError);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 60.0);  // the budget is about 1 s; generous for a loaded machine
}

TEST(RegexMatcherTest, TheTimeBudgetCoversAWholeDocumentNotEachPiece) {
  // Each piece alone is searched well within a piece's budget (1 s), but a
  // document of many such pieces (split by special tokens or an earlier Split
  // stage) must not add the budgets up: the document's budget is ~1 s.
  auto matcher = MakeRegexMatcher("(a|aa)+$", "exp.json: pre_tokenizer.pattern.Regex");
  ASSERT_TRUE(matcher.ok());
  const std::string piece = std::string(22, 'a') + "b";
  const auto start = std::chrono::steady_clock::now();
  std::vector<Span> spans;
  try {
    const RegexDocumentBudget budget(piece.size() * 100);
    for (int i = 0; i < 1'000'000; ++i) {
      spans.clear();
      (*matcher)->FindMatches(piece, &spans);
    }
    FAIL() << "expected a RegexSearchError";
  } catch (const RegexSearchError& e) {
    EXPECT_NE(std::string(e.what()).find("on a document of 2300 bytes"), std::string::npos) << e.what();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 60.0);
  // Outside the scope, each call has a budget of its own again.
  spans.clear();
  EXPECT_NO_THROW((*matcher)->FindMatches(piece, &spans));
}

TEST(RegexMatcherTest, ErrorsNameThePatternWhenNoOriginIsGiven) {
  auto matcher = MakeRegexMatcher(R"(\A(?:\s*\s*[\r\n]|\s+))");
  ASSERT_TRUE(matcher.ok());
  std::vector<Span> spans;
  try {
    (*matcher)->FindMatches(std::string(6000, ' '), &spans);
    FAIL() << "expected a RegexSearchError";
  } catch (const RegexSearchError& e) {
    EXPECT_NE(std::string(e.what()).find("pre-tokenizer regex /\\A(?:"), std::string::npos) << e.what();
  }
}

TEST(RegexMatcherTest, ConcurrentSearchesOnOneMatcherAgree) {
  auto matcher = MakeRegexMatcher(R"(\p{L}+|\p{N}{1,3}|\s+(?!\S)|\s+|[^\s\p{L}\p{N}]+)");
  ASSERT_TRUE(matcher.ok());
  std::mt19937_64 rng(7);
  std::vector<std::string> texts;
  for (int i = 0; i < 64; ++i) texts.push_back(testing::RandomText(rng, 200));
  std::vector<std::vector<Span>> want(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) (*matcher)->FindMatches(texts[i], &want[i]);

  std::vector<int> failures(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20; ++round) {
        for (size_t i = 0; i < texts.size(); ++i) {
          std::vector<Span> got;
          (*matcher)->FindMatches(texts[i], &got);
          if (got != want[i]) ++failures[t];
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

TEST(RegexMatcherTest, AppendsToExistingSpans) {
  auto matcher = MakeRegexMatcher("b");
  ASSERT_TRUE(matcher.ok());
  std::vector<Span> spans = {{9, 9}};
  (*matcher)->FindMatches("abcb", &spans);
  const std::vector<Span> want = {{9, 9}, {1, 2}, {3, 4}};
  EXPECT_EQ(spans, want);
  EXPECT_EQ((*matcher)->name(), "onig");
}

}  // namespace
}  // namespace tokenfeed::tokenizer
