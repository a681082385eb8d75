// The fused DeepSeek-V3 pass against its three Split stages run one after
// another, each on the pieces the previous one left (Isolated), with
// Oniguruma's matchers (the truth) and with the fast scanners.
#include "tokenizer/deepseek_pretokenizer.h"

#include <chrono>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tokenizer/fast_matchers.h"
#include "tokenizer/pretokenize_testing.h"
#include "tokenizer/split_matcher.h"

namespace tokenfeed::tokenizer {
namespace {

using testing::CharBoundaries;
using testing::EncodeUtf8;

class Staged {
 public:
  explicit Staged(bool fast) {
    for (std::string_view pattern : {kDeepSeekV3DigitsPattern, kDeepSeekV3CjkPattern, kDeepSeekV3MainPattern}) {
      if (fast) {
        stages_.push_back(MakeFastMatcher(pattern));
      } else {
        auto m = MakeRegexMatcher(pattern);
        EXPECT_TRUE(m.ok());
        stages_.push_back(std::move(*m));
      }
    }
  }

  std::vector<std::string_view> Pieces(std::string_view text) const {
    std::vector<std::string_view> pieces;
    if (!text.empty()) pieces.push_back(text);
    for (const auto& stage : stages_) {
      std::vector<std::string_view> next;
      for (std::string_view piece : pieces) {
        std::vector<Span> spans;
        stage->FindMatches(piece, &spans);
        uint32_t prev = 0;
        for (const Span& s : spans) {
          if (s.begin > prev) next.push_back(piece.substr(prev, s.begin - prev));
          if (s.end > s.begin) next.push_back(piece.substr(s.begin, s.end - s.begin));
          prev = s.end;
        }
        if (prev < piece.size()) next.push_back(piece.substr(prev));
      }
      pieces.swap(next);
    }
    return pieces;
  }

 private:
  std::vector<std::unique_ptr<SplitMatcher>> stages_;
};

const Staged& Onig() {
  static const Staged* s = new Staged(/*fast=*/false);
  return *s;
}
const Staged& Fast() {
  static const Staged* s = new Staged(/*fast=*/true);
  return *s;
}

std::string Show(const std::vector<std::string_view>& pieces) {
  std::string s;
  for (std::string_view p : pieces) {
    s += '[';
    for (unsigned char c : p) {
      if (c >= 0x20 && c < 0x7F) {
        s += static_cast<char>(c);
      } else {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02X", c);
        s += buf;
      }
    }
    s += "] ";
  }
  return s;
}

// Fused against both staged runs; false (after one failure message) when they differ.
bool Same(std::string_view text) {
  std::vector<std::string_view> fused;
  SplitDeepSeekV3(text, &fused);
  const std::vector<std::string_view> want = Onig().Pieces(text);
  const std::vector<std::string_view> fast = Fast().Pieces(text);
  // Pieces must be the same views of `text`, not only the same bytes.
  auto same_views = [](const std::vector<std::string_view>& a, const std::vector<std::string_view>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].data() != b[i].data() || a[i].size() != b[i].size()) return false;
    }
    return true;
  };
  if (same_views(fused, want) && same_views(fast, want)) return true;
  ADD_FAILURE() << "on \"" << Show({text}) << "\"\n fused " << Show(fused) << "\n fast  " << Show(fast)
                << "\n onig  " << Show(want);
  return false;
}

TEST(DeepSeekPreTokenizerTest, KnownPieces) {
  auto pieces = [](std::string_view text) {
    std::vector<std::string_view> p;
    SplitDeepSeekV3(text, &p);
    return std::vector<std::string>(p.begin(), p.end());
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(pieces(""), V{});
  EXPECT_EQ(pieces("a1234567b"), (V{"a", "123", "456", "7", "b"}));
  // The CJK run is stage 3's subject of its own: U+30FB (Po) splits it.
  EXPECT_EQ(pieces("x\u65e5\u672c\u30fb\u6771\u4eac y"), (V{"x", "\u65e5\u672c", "\u30fb", "\u6771\u4eac", " y"}));
  // A character that starts no match is a gap piece; "1x" is not B2 here,
  // because the digit went in stage 1.
  EXPECT_EQ(pieces("\x01\x02 1x"), (V{"\x01\x02", " ", "1", "x"}));
  // \s+(?!\S) looks at the end of its subject, which a digit ends.
  EXPECT_EQ(pieces("a   1"), (V{"a", "   ", "1"}));
  EXPECT_EQ(pieces("a   b"), (V{"a", "  ", " b"}));
}

// Every string of up to four characters over an alphabet with one character
// for each class that any of the three stages tells apart, CJK and digit
// neighbours included.
TEST(DeepSeekPreTokenizerTest, EveryShortStringOfClassCharactersAgrees) {
  std::vector<std::string> a;
  for (char32_t cp : {U'a', U'Z', U' ', U'\t', U'\n', U'\r', U'\u3000', U'\u00a0', U'1', U'\u0660', U'\u00b2',
                      U'!', U'.', U'$', U'\u00bf', U'\u0301', U'\u200d', U'\u0378', U'\u4e00', U'\u9fa5', U'\u9fa6',
                      U'\u3040', U'\u3099', U'\u309b', U'\u30a0', U'\u30fb', U'\u30fc', U'\u3005', U'\U0001F600'}) {
    a.push_back(EncodeUtf8(cp));
  }
  size_t failures = 0;
  for (const std::string& w : a) {
    for (const std::string& x : a) {
      failures += !Same(w + x);
      for (const std::string& y : a) {
        failures += !Same(w + x + y);
        for (const std::string& z : a) failures += !Same(w + x + y + z);
        if (failures > 5) return;
      }
    }
  }
}

TEST(DeepSeekPreTokenizerTest, RandomTextAndItsPiecesAgree) {
  std::mt19937_64 rng(0xdee95eec);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  size_t failures = 0;
  for (int i = 0; i < 3000 && failures < 5; ++i) failures += !Same(testing::RandomText(rng, 1 + rng() % 300));
  for (int i = 0; i < 200 && failures < 5; ++i) {
    const std::string text = testing::RandomText(rng, 1 + rng() % 20);
    const std::vector<uint32_t> b = CharBoundaries(text);
    for (size_t x = 0; x < b.size() && failures < 5; ++x) {
      for (size_t y = x + 1; y < b.size() && failures < 5; ++y) {
        failures += !Same(std::string_view(text).substr(b[x], b[y] - b[x]));
      }
    }
  }
  ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "random differential ran out of time";
}

TEST(DeepSeekPreTokenizerTest, CorpusOrSampleAgrees) {
  std::string source;
  auto docs = testing::CorpusOrSample(&source, size_t{8} << 20);
  ASSERT_TRUE(docs.ok()) << docs.status().ToString();
  ASSERT_FALSE(docs->empty()) << source;
  size_t failures = 0;
  for (const std::string& d : *docs) {
    failures += !Same(d);
    if (failures > 5) break;
  }
}

TEST(DeepSeekPreTokenizerTest, MegabyteRunsAgree) {
  for (std::string unit : {"a", " ", "1", "\u4e2d", "\u4e2d1", " \n", "\u30fb", "a\u4e2d "}) {
    std::string run;
    while (run.size() < (1 << 20)) run += unit;
    ASSERT_TRUE(Same(run + "x")) << unit;
  }
  // A whitespace run that a digit ends: \s+(?!\S) takes all of it.
  EXPECT_TRUE(Same(std::string(1 << 20, ' ') + "1"));
}

// Runs long enough for the 16-byte steps, each ended by a \p{N} or CJK
// character inside a 16-byte block: the subject ends there, not at the block.
TEST(DeepSeekPreTokenizerTest, SubjectEndsInsideAWideStep) {
  EXPECT_TRUE(Same(std::string(40, 'a') + "1" + std::string(40, 'b') + "\u4e00" + std::string(20, 'c') + "\u0660" +
                   std::string(20, 'd') + "\u30fb"));
  EXPECT_TRUE(Same(std::string(23, 'x') + "\u3042" + std::string(23, ' ') + "\u3042" + std::string(17, '!') + "\u30fb!"));
}

}  // namespace
}  // namespace tokenfeed::tokenizer
