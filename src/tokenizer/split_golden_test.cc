// Both engines against the reference itself: testdata/split_golden.jsonl holds
// the spans HF tokenizers reports for each fast scanner's pattern (the Split
// regexes read from the tokenizer.json files, GPT-2's and cl100k's) on the
// sample lines, edge cases and random strings (testdata/make_split_golden.py).
// TOKENFEED_SPLIT_GOLDEN=<file> checks another golden file made by that script.
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <simdjson.h>

#include "tokenizer/fast_matchers.h"
#include "tokenizer/pretokenize_testing.h"
#include "tokenizer/split_matcher.h"

namespace tokenfeed::tokenizer {
namespace {

struct GoldenText {
  std::string text;
  std::vector<std::vector<Span>> spans;  // one list per pattern
};

struct Golden {
  std::string path;
  std::vector<std::string> patterns;
  std::vector<GoldenText> texts;
};

std::string GoldenPath() {
  const char* env = std::getenv("TOKENFEED_SPLIT_GOLDEN");
  if (env != nullptr && *env != '\0') return env;
  return TOKENFEED_SOURCE_DIR "/src/tokenizer/testdata/split_golden.jsonl";
}

// Fails the current test (and returns false) on any parse problem.
bool LoadGolden(Golden* golden) {
  golden->path = GoldenPath();
  std::ifstream in(golden->path, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << "cannot open " << golden->path;
    return false;
  }
  simdjson::ondemand::parser parser;
  std::string line;
  size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    simdjson::padded_string padded(line);
    auto doc = parser.iterate(padded);
    auto fail = [&] {
      ADD_FAILURE() << golden->path << ":" << line_no << ": unexpected JSON";
      return false;
    };
    if (line_no == 1) {
      simdjson::ondemand::array patterns;
      if (doc["patterns"].get_array().get(patterns)) return fail();
      for (auto p : patterns) {
        std::string_view s;
        if (p.get_string().get(s)) return fail();
        golden->patterns.emplace_back(s);
      }
      continue;
    }
    GoldenText t;
    std::string_view text;
    if (doc["text"].get_string().get(text)) return fail();
    t.text = std::string(text);
    simdjson::ondemand::array per_pattern;
    if (doc["spans"].get_array().get(per_pattern)) return fail();
    for (auto list : per_pattern) {
      std::vector<Span> spans;
      simdjson::ondemand::array pairs;
      if (list.get_array().get(pairs)) return fail();
      for (auto pair : pairs) {
        std::vector<uint64_t> v;
        simdjson::ondemand::array be;
        if (pair.get_array().get(be)) return fail();
        for (auto x : be) {
          uint64_t u;
          if (x.get_uint64().get(u)) return fail();
          v.push_back(u);
        }
        if (v.size() != 2) return fail();
        spans.push_back(Span{static_cast<uint32_t>(v[0]), static_cast<uint32_t>(v[1])});
      }
      t.spans.push_back(std::move(spans));
    }
    if (t.spans.size() != golden->patterns.size()) return fail();
    golden->texts.push_back(std::move(t));
  }
  return true;
}

const Golden& TheGolden() {
  static const Golden* golden = [] {
    auto* g = new Golden;
    LoadGolden(g);
    return g;
  }();
  return *golden;
}

// The reference's find_iter reports no empty match for these patterns; the
// golden file (matches as pieces) could not show one anyway.
std::vector<Span> NonEmpty(std::vector<Span> spans) {
  std::erase_if(spans, [](const Span& s) { return s.begin == s.end; });
  return spans;
}

TEST(SplitGoldenTest, CoversEveryScanner) {
  const Golden& g = TheGolden();
  ASSERT_FALSE(g.patterns.empty()) << g.path;
  ASSERT_FALSE(g.texts.empty()) << g.path;
  std::set<std::string_view> covered;
  for (const std::string& p : g.patterns) {
    auto fast = MakeFastMatcher(p);
    ASSERT_NE(fast, nullptr) << "no fast scanner for golden pattern " << p;
    covered.insert(fast->name());
  }
  std::set<std::string_view> all;
  for (const FastPattern& known : KnownFastPatterns()) all.insert(known.name);
  EXPECT_EQ(covered, all);
}

TEST(SplitGoldenTest, BothEnginesMatchTheReference) {
  const Golden& g = TheGolden();
  ASSERT_FALSE(g.texts.empty()) << g.path;
  size_t compared = 0;
  for (size_t p = 0; p < g.patterns.size(); ++p) {
    auto fast = MakeFastMatcher(g.patterns[p]);
    auto onig = MakeRegexMatcher(g.patterns[p]);
    ASSERT_NE(fast, nullptr);
    ASSERT_TRUE(onig.ok());
    size_t failures = 0;
    for (size_t t = 0; t < g.texts.size() && failures < 5; ++t) {
      const GoldenText& gt = g.texts[t];
      for (const SplitMatcher* m : {fast.get(), onig->get()}) {
        std::vector<Span> got;
        m->FindMatches(gt.text, &got);
        if (NonEmpty(got) != gt.spans[p]) {
          ++failures;
          ADD_FAILURE() << m->name() << " on " << g.path << " text " << t << " differs from the reference\n ours "
                        << testing::DescribeSpans(gt.text, NonEmpty(got)) << "\n  ref "
                        << testing::DescribeSpans(gt.text, gt.spans[p]);
        }
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 2 * g.patterns.size() * g.texts.size());
}

}  // namespace
}  // namespace tokenfeed::tokenizer
