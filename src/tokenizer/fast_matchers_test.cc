// The proof that each fast scanner is its pattern: span-for-span equality with
// Oniguruma (MakeRegexMatcher on the same pattern string) on targeted cases,
// on every string of one to three characters over an alphabet with one
// character of each class the scanners tell apart, on seeded random text and
// every piece of it, and on megabyte runs of one class.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tokenizer/fast_matchers.h"
#include "tokenizer/pretokenize_testing.h"
#include "tokenizer/split_matcher.h"

namespace tokenfeed::tokenizer {
namespace {

using testing::CharBoundaries;
using testing::DescribeSpans;
using testing::EncodeUtf8;

std::string Escaped(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<uint8_t>(text[i]);
    if (c >= 0x20 && c < 0x7F && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    }
  }
  return out;
}

struct Pair {
  const FastPattern* known;
  std::unique_ptr<SplitMatcher> fast;
  std::unique_ptr<SplitMatcher> onig;
};

// One fast scanner and its Oniguruma twin for every known pattern string.
const std::vector<Pair>& Pairs() {
  static const std::vector<Pair>* pairs = [] {
    auto* v = new std::vector<Pair>;
    for (const FastPattern& known : KnownFastPatterns()) {
      auto onig = MakeRegexMatcher(known.pattern);
      if (!onig.ok()) {
        ADD_FAILURE() << known.name << ": " << onig.status().ToString();
        continue;
      }
      v->push_back(Pair{&known, MakeFastMatcher(known.pattern), std::move(*onig)});
    }
    return v;
  }();
  return *pairs;
}

// Compares the two on `text`; returns false (after one failure message that
// shows where they part) when they differ.
bool Same(const Pair& pair, std::string_view text) {
  std::vector<Span> want;
  std::vector<Span> got;
  pair.onig->FindMatches(text, &want);
  pair.fast->FindMatches(text, &got);
  // A scanner that hands over an Isolated split's pieces itself must give
  // what the split makes of Oniguruma's matches: each gap and each non-empty
  // match, in order.
  std::vector<std::string_view> pieces;
  if (pair.fast->FindPieces(text, &pieces)) {
    std::vector<std::string_view> split;
    uint32_t prev = 0;
    for (const Span& m : want) {
      if (prev != m.begin) split.push_back(text.substr(prev, m.begin - prev));
      if (m.end != m.begin) split.push_back(text.substr(m.begin, m.end - m.begin));
      prev = m.end;
    }
    if (prev != text.size()) split.push_back(text.substr(prev));
    // The same views into `text`, not only equal bytes.
    bool same_views = pieces.size() == split.size();
    for (size_t i = 0; same_views && i < pieces.size(); ++i) same_views = pieces[i].data() == split[i].data();
    if (pieces != split || !same_views) {
      ADD_FAILURE() << pair.known->name << ": FindPieces gives " << pieces.size() << " pieces, the split of "
                    << "Oniguruma's matches " << split.size() << ", on \"" << Escaped(text.substr(0, 100)) << "\"";
      return false;
    }
  } else {
    EXPECT_TRUE(pieces.empty()) << pair.known->name << ": FindPieces appended pieces and returned false";
  }
  if (got == want) return true;
  size_t first = 0;
  while (first < got.size() && first < want.size() && got[first] == want[first]) ++first;
  const size_t from = first > 2 ? first - 2 : 0;
  auto window = [&](const std::vector<Span>& spans) {
    std::vector<Span> w(spans.begin() + std::min(from, spans.size()),
                        spans.begin() + std::min(first + 3, spans.size()));
    return DescribeSpans(text, w);
  };
  const size_t at = first < want.size() ? want[first].begin : first < got.size() ? got[first].begin : text.size();
  const size_t lo = at > 40 ? at - 40 : 0;
  ADD_FAILURE() << pair.known->name << " differs from Oniguruma at span " << first << " (byte " << at << ") of a "
                << text.size() << "-byte text\n text near there: \"" << Escaped(text.substr(lo, 100))
                << "\"\n fast " << window(got) << "\n onig " << window(want);
  return false;
}

TEST(FastMatchersTest, EveryKnownPatternHasItsScanner) {
  ASSERT_EQ(Pairs().size(), KnownFastPatterns().size());
  for (const Pair& pair : Pairs()) {
    ASSERT_NE(pair.fast, nullptr) << pair.known->name;
    EXPECT_EQ(pair.fast->name(), pair.known->name);
    auto chosen = MakeSplitMatcher(pair.known->pattern);
    ASSERT_TRUE(chosen.ok());
    EXPECT_EQ((*chosen)->name(), pair.known->name);
    auto general = MakeSplitMatcher(pair.known->pattern, /*allow_fast=*/false);
    ASSERT_TRUE(general.ok());
    EXPECT_EQ((*general)->name(), "onig");
  }
}

// The scanners whose matches tile the text hand over pieces directly; the
// DeepSeek-V3 stages, whose matches leave gaps, do not.
TEST(FastMatchersTest, TilingScannersHandOverPieces) {
  std::vector<std::string_view> pieces;
  for (const Pair& pair : Pairs()) {
    const std::string_view name = pair.fast->name();
    const bool tiles = name == "fast:gpt2" || name == "fast:llama3" || name == "fast:qwen2" || name == "fast:cl100k";
    pieces.clear();
    EXPECT_EQ(pair.fast->FindPieces("Hello, world 2024!\n", &pieces), tiles) << name;
    if (tiles) EXPECT_GE(pieces.size(), 4u) << name;
  }
}

TEST(FastMatchersTest, OtherPatternsHaveNoScanner) {
  EXPECT_EQ(MakeFastMatcher(""), nullptr);
  EXPECT_EQ(MakeFastMatcher(R"(\p{N}{1,2})"), nullptr);
  // One character off the GPT-2 pattern.
  std::string near(kByteLevelPattern);
  near.back() = '*';
  EXPECT_EQ(MakeFastMatcher(near), nullptr);
  auto general = MakeSplitMatcher(near);
  ASSERT_TRUE(general.ok());
  EXPECT_EQ((*general)->name(), "onig");
  EXPECT_FALSE(MakeSplitMatcher("(").ok());
}

TEST(FastMatchersTest, DeepSeekPatternsAreTheTokenizerJsonStrings) {
  // The decoded JSON holds CR and LF themselves and the CJK characters.
  EXPECT_NE(kDeepSeekV3MainPattern.find("[^\r\n\\p{L}"), std::string_view::npos);
  EXPECT_EQ(kDeepSeekV3CjkPattern, "[\xE4\xB8\x80-\xE9\xBE\xA5\xE3\x81\x80-\xE3\x82\x9F\xE3\x82\xA0-\xE3\x83\xBF]+");
}

// Targeted inputs: each names an edge of one of the patterns.
const std::vector<std::string>& TargetedCases() {
  static const std::vector<std::string> cases = {
      "",
      "a",
      " ",
      "Hello world",
      "Hello, world! It's 2024.",
      // \s+(?!\S) gives back one space before a non-space.
      "a   b", "a  ", "   ", "  \t x", "a \t\u00a0b", "x \u3000y", "\u3000\u3000",
      // Whitespace characters outside ASCII.
      "a\u0085b", "a\u0085\u0085b", "\u0085", "a\u2028b", "a \u2028 b", "a\u00a0b", "\u00a0\u00a0x",
      "\u1680x", "a\u2029\u2029", "\u202f\u205f\u3000end",
      // CR/LF runs and \s*[\r\n]+ backtracking.
      "a\r\nb", "a\r\n\r\nb", "a \n \n b", "a\n\n\n", "\n", "\r", "\r\r\n\n", " \n", "\n ", "x\n  \n\ty",
      "a \r\n  ", "\t\n\t\n\tx", "!!\n\n", "!!\n\n x", " !!\r\n", "a\u0085\nb", "\u2028\n", "\n\u3000\n\u3000",
      // Digits: \p{N}{1,3} greedy chunking and non-ASCII numbers.
      "1", "12", "123", "1234", "1234567", "a1234b", "1a2b3c", "12 345", "\u0661\u0662\u0663\u0664", "\u00b2\u00b3",
      "\u2160\u2161\u2162\u2163", "\uff11\uff12\uff13\uff14", "\U0001D7CE\U0001D7CF\U0001D7D0\U0001D7D1",
      "3.14159", "$1,234,567.89", "1\u0301",
      // Contractions and case folding.
      "it's", "IT'S", "they're", "THEY'RE", "we've", "I'm", "you'll", "he'd", "o'\u017f", "'\u017f", "'\u017ft",
      "'\u212a", "'K", "'k", "'ll", "'LL", "'lL", "'l", "'r", "'re", "'rE", "'ve", "'x", "''s", "' s", "'", "'s'",
      "don't", "DON'T", "rock'n'roll", "l'\u00e9t\u00e9", "'\u0130", "'\u0131", "'\u00df",
      // Optional prefix [^\r\n\p{L}\p{N}]? and " ?" prefixes.
      " .com", ".com", "x.com", "\"quoted\"", "(paren)", "-dash", "~tilde", "~~~", "~", " ~", " ~x", "@user",
      "#tag", "a.b.c", "...", " ...", "!x", "\u00bfQu\u00e9?", "\u00abguillemets\u00bb", "\u201cquote\u201d",
      "\tword", "\nword", "\rword", " \tword", "\u0085word", "\u00a0word", "\u3000word",
      // Letters of every kind and combining marks.
      "caf\u00e9", "cafe\u0301", "e\u0301\u0301", "\u0301", "\u0301a", " \u0301", "a\u0301b", "\u0915\u094d\u0937",
      "\u0939\u093f\u0928\u094d\u0926\u0940", "\u0e20\u0e32\u0e29\u0e32", "\u01c5ungla", "\u02b0h", "\u1c89x",
      "\u05e9\u05c1\u05b8", "\u0627\u0644\u0639\u0631\u0628\u064a\u0629",
      // CJK and kana, and DeepSeek's range ends.
      "\u4e2d\u6587", "\u4e00\u9fa5", "\u9fa6", "\u4dff\u4e00", "\u3040\u309f\u30a0\u30ff", "\u303f\u3040",
      "\u30ff\u3100", "\u65e5\u672c\u8a9e\u306e\u6587\u7ae0", "\u6771\u4eac\u30bf\u30ef\u30fc",
      "\u4eba\u3005", "\u3001\u3002", "\uff01\uff1f", "\ud55c\uad6d\uc5b4", "\u4e2d1\u6587",
      // Emoji: ZWJ sequences, skin tones, flags, variation selectors, keycaps.
      "\U0001F600", "\U0001F44D\U0001F3FD", "\U0001F468\u200d\U0001F469\u200d\U0001F467",
      "\U0001F3F3\ufe0f\u200d\U0001F308", "\U0001F1FA\U0001F1F8", "\u2764\ufe0f", "1\ufe0f\u20e3", "#\ufe0f\u20e3",
      "a\u200db", "\u200d", "\u200d\u200d", "x\u200b y", "\ufeffbom", "soft\u00adhyphen",
      // Private use, unassigned, controls, NUL.
      "\ue000", "\ue000a", "\U000F0000x", "\u0378a", "\U0010FFFF", std::string("a\0b", 3), "\x01\x02x",
      "\x7f", "\x1b[0m",
      // Code.
      "int main() {\n\treturn 0;\n}\n", "    if (x) {\r\n        y();\r\n    }\r\n", "a+=b; c->d; e::f",
  };
  return cases;
}

TEST(FastMatchersTest, TargetedCasesAgreeWithOniguruma) {
  for (const Pair& pair : Pairs()) {
    for (const std::string& text : TargetedCases()) Same(pair, text);
  }
}

TEST(FastMatchersTest, EveryPieceOfTheTargetedCasesAgrees) {
  for (const Pair& pair : Pairs()) {
    for (const std::string& text : TargetedCases()) {
      const std::vector<uint32_t> b = CharBoundaries(text);
      for (size_t i = 0; i < b.size(); ++i) {
        for (size_t j = i; j < b.size(); ++j) {
          if (!Same(pair, std::string_view(text).substr(b[i], b[j] - b[i]))) return;
        }
      }
    }
  }
}

// One character for each way the scanners classify a character: the
// contraction letters and their folds, every kind of space, CR and LF, ASCII
// punctuation (DeepSeek's B1 class) and other punctuation, symbols, numbers,
// letters, marks, format and private-use characters, unassigned code points,
// and both sides of DeepSeek's CJK ranges.
const std::vector<std::string>& ClassAlphabet() {
  static const std::vector<std::string> alphabet = [] {
    std::vector<std::string> a;
    for (char32_t cp : {U'\'', U's', U'S', U'r', U'e', U'l', U'x', U'\u017f', U'\u00e9', U' ', U'\t', U'\r', U'\n',
                        U'\u0085', U'\u3000', U'\u00a0', U'1', U'\u0660', U'\u00b2', U'!', U'$', U'~', U'\u00bf',
                        U'\u2764', U'\u0301', U'\u200d', U'\ue000', U'\u0378', U'\u4e00', U'\u3042', U'\u30a2',
                        U'\u9fa6', U'\u3005', U'\0'}) {
      a.push_back(EncodeUtf8(cp));
    }
    return a;
  }();
  return alphabet;
}

TEST(FastMatchersTest, EveryStringOfUpToThreeClassCharactersAgrees) {
  const std::vector<std::string>& a = ClassAlphabet();
  for (const Pair& pair : Pairs()) {
    size_t failures = 0;
    for (const std::string& x : a) {
      for (const std::string& y : a) {
        failures += !Same(pair, x + y);
        for (const std::string& z : a) failures += !Same(pair, x + y + z);
        if (failures > 5) return;
      }
    }
  }
}

TEST(FastMatchersTest, PairsOfTrickyCodePointsAgreeInContext) {
  std::vector<std::string> tricky;
  for (char32_t cp : testing::TrickyCodePoints()) tricky.push_back(EncodeUtf8(cp));
  for (const Pair& pair : Pairs()) {
    size_t failures = 0;
    for (const std::string& x : tricky) {
      for (const std::string& y : tricky) {
        failures += !Same(pair, x + y);
        failures += !Same(pair, "a" + x + y + " 1");
        if (failures > 5) return;
      }
    }
  }
}

// Every assigned code point (all of planes 0-3 and 14; planes 4-13 are
// unassigned and 15-16 private use, so one in 61 of those), each in a few
// neighbourhoods: after an apostrophe (the contraction letters and their case
// folds) and as the second letter of 'll, before a letter, a space, a newline
// and a digit, doubled. Chunks of about 64 KiB.
TEST(FastMatchersTest, EveryCodePointInContextAgrees) {
  std::set<std::string_view> scanners;
  for (const Pair& pair : Pairs()) {
    if (!scanners.insert(pair.known->name).second) continue;  // a respelling of a pattern done already
    size_t failures = 0;
    std::string text;
    for (char32_t cp = 0; cp <= 0x10FFFF && failures < 5; ++cp) {
      if (cp >= 0xD800 && cp <= 0xDFFF) continue;
      const int plane = static_cast<int>(cp >> 16);
      if (plane >= 4 && plane != 14 && cp % 61 != 0) continue;
      const std::string c = EncodeUtf8(cp);
      text += "'" + c + "e'l" + c + " " + c + c + "\n" + c + "1";
      if (text.size() > (1 << 16)) {
        failures += !Same(pair, text);
        text.clear();
      }
    }
    if (!text.empty()) Same(pair, text);
  }
}

// Seeded random text: whole strings, then every piece of the shorter ones
// (the later pre-tokenizer stages see pieces that start and end anywhere).
TEST(FastMatchersTest, RandomTextAndAllItsPiecesAgree) {
  std::mt19937_64 rng(0x70c3f33d);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (const Pair& pair : Pairs()) {
    size_t failures = 0;
    for (int i = 0; i < 2000 && failures < 5; ++i) {
      const std::string text = testing::RandomText(rng, 1 + rng() % 300);
      failures += !Same(pair, text);
    }
    for (int i = 0; i < 300 && failures < 5; ++i) {
      const std::string text = testing::RandomText(rng, 1 + rng() % 24);
      const std::vector<uint32_t> b = CharBoundaries(text);
      for (size_t x = 0; x < b.size() && failures < 5; ++x) {
        for (size_t y = x + 1; y < b.size() && failures < 5; ++y) {
          failures += !Same(pair, std::string_view(text).substr(b[x], b[y] - b[x]));
        }
      }
    }
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "random differential ran out of time";
  }
}

// A megabyte of one class: linear time and no recursion in both engines.
TEST(FastMatchersTest, MegabyteRunsAgree) {
  constexpr size_t kBytes = 1 << 20;
  const std::vector<std::string> units = {"a", " ", "\n", "\r\n", "1", "!", "\u4e2d", "\u0301", "\u3000",
                                          " \n", "a ", "\u00a0", "\U0001F600", "\u200d", "'s"};
  for (const std::string& unit : units) {
    std::string run;
    while (run.size() + unit.size() <= kBytes) run += unit;
    for (const std::string& text : {run + "x", " " + run}) {
      std::set<std::string_view> scanners;
      for (const Pair& pair : Pairs()) {
        if (!scanners.insert(pair.known->name).second) continue;  // a respelling of a pattern done already
        std::vector<Span> got;
        std::vector<Span> want;
        pair.fast->FindMatches(text, &got);
        pair.onig->FindMatches(text, &want);
        ASSERT_EQ(got.size(), want.size()) << pair.known->name << " on a run of \"" << Escaped(unit) << "\"";
        ASSERT_TRUE(got == want) << pair.known->name << " on a run of \"" << Escaped(unit) << "\"";
      }
    }
  }
}

// Scanners hold no mutable state: one instance serves many threads.
TEST(FastMatchersTest, ConcurrentUseOfOneScannerAgrees) {
  std::mt19937_64 rng(99);
  std::vector<std::string> texts;
  for (int i = 0; i < 32; ++i) texts.push_back(testing::RandomText(rng, 300));
  for (const Pair& pair : Pairs()) {
    std::vector<std::vector<Span>> want(texts.size());
    for (size_t i = 0; i < texts.size(); ++i) pair.onig->FindMatches(texts[i], &want[i]);
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] {
        for (int round = 0; round < 10; ++round) {
          for (size_t i = 0; i < texts.size(); ++i) {
            std::vector<Span> got;
            pair.fast->FindMatches(texts[i], &got);
            if (got != want[i]) ++failures;
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(failures.load(), 0) << pair.known->name;
  }
}

TEST(FastMatchersTest, AppendsAfterExistingSpans) {
  for (const Pair& pair : Pairs()) {
    std::vector<Span> got = {{7, 7}};
    pair.fast->FindMatches("a 1", &got);
    std::vector<Span> want = {{7, 7}};
    pair.onig->FindMatches("a 1", &want);
    EXPECT_EQ(got, want) << pair.known->name;
  }
}

// The results the scanners are for, written out: these hold for Oniguruma
// too, so they guard the meaning of "agree".
TEST(FastMatchersTest, KnownSplits) {
  auto texts = [](const SplitMatcher& m, std::string_view text) {
    std::vector<Span> spans;
    m.FindMatches(text, &spans);
    std::vector<std::string> out;
    for (const Span& s : spans) out.emplace_back(text.substr(s.begin, s.end - s.begin));
    return out;
  };
  auto llama = MakeFastMatcher(kLlama3Pattern);
  using V = std::vector<std::string>;
  EXPECT_EQ(texts(*llama, "a   b"), (V{"a", "  ", " b"}));
  EXPECT_EQ(texts(*llama, "12345 x"), (V{"123", "45", " x"}));
  EXPECT_EQ(texts(*llama, "HE'S o'\u017f"), (V{"HE", "'S", " o", "'\u017f"}));
  EXPECT_EQ(texts(*llama, "a \n\n  b"), (V{"a", " \n\n", " ", " b"}));
  auto qwen = MakeFastMatcher(kQwen2Pattern);
  EXPECT_EQ(texts(*qwen, "12345"), (V{"1", "2", "3", "4", "5"}));
  auto gpt2 = MakeFastMatcher(kByteLevelPattern);
  EXPECT_EQ(texts(*gpt2, "HE'S it's  x"), (V{"HE", "'", "S", " it", "'s", " ", " x"}));
  auto ds_main = MakeFastMatcher(kDeepSeekV3MainPattern);
  EXPECT_EQ(texts(*ds_main, " .com"), (V{" .", "com"}));
  EXPECT_EQ(texts(*ds_main, ".com"), (V{".com"}));
  EXPECT_EQ(texts(*ds_main, "1x 2"), (V{"1x", " "}));  // "2" starts no match
  auto ds_digits = MakeFastMatcher(kDeepSeekV3DigitsPattern);
  EXPECT_EQ(texts(*ds_digits, "a1234567b"), (V{"123", "456", "7"}));
  auto ds_cjk = MakeFastMatcher(kDeepSeekV3CjkPattern);
  EXPECT_EQ(texts(*ds_cjk, "ab\u4e2d\u6587\u3001\u3072\u3089"), (V{"\u4e2d\u6587", "\u3072\u3089"}));
}

}  // namespace
}  // namespace tokenfeed::tokenizer
