// Fast scanners against Oniguruma on real text: the JSONL corpus in
// TOKENFEED_CORPUS_DIR (field "text"), or the built-in multilingual sample when
// that is unset. Each scanner sees every whole document, and DeepSeek-V3's
// stages also see the pieces the earlier stages cut, as in the tokenizer.
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tokenizer/fast_matchers.h"
#include "tokenizer/pretokenize_testing.h"
#include "tokenizer/split_matcher.h"

namespace tokenfeed::tokenizer {
namespace {

struct Corpus {
  std::string source;
  std::vector<std::string> docs;
  size_t bytes = 0;
};

const Corpus& TheCorpus() {
  static const Corpus* corpus = [] {
    auto* c = new Corpus;
    auto docs = testing::CorpusOrSample(&c->source);
    if (!docs.ok()) {
      ADD_FAILURE() << docs.status().ToString();
      return c;
    }
    c->docs = std::move(*docs);
    for (const std::string& d : c->docs) c->bytes += d.size();
    return c;
  }();
  return *corpus;
}

// The first difference between the two matchers on `text`, or "".
std::string Difference(const SplitMatcher& fast, const SplitMatcher& onig, std::string_view text) {
  std::vector<Span> got;
  std::vector<Span> want;
  fast.FindMatches(text, &got);
  onig.FindMatches(text, &want);
  if (got == want) return "";
  size_t i = 0;
  while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
  auto at = [&](const std::vector<Span>& s) {
    return i < s.size() ? testing::DescribeSpans(text, {s[i]}) : std::string("(none)");
  };
  return std::string(fast.name()) + " span " + std::to_string(i) + ": fast " + at(got) + " onig " + at(want);
}

// The pieces a Split pre-tokenizer with the "Isolated" behaviour leaves:
// every match and every gap between matches, empty ones dropped.
std::vector<std::string_view> IsolatedPieces(std::string_view text, const std::vector<Span>& spans) {
  std::vector<std::string_view> pieces;
  uint32_t prev = 0;
  for (const Span& s : spans) {
    if (s.begin > prev) pieces.push_back(text.substr(prev, s.begin - prev));
    if (s.end > s.begin) pieces.push_back(text.substr(s.begin, s.end - s.begin));
    prev = s.end;
  }
  if (prev < text.size()) pieces.push_back(text.substr(prev));
  return pieces;
}

TEST(CorpusDiffTest, CorpusIsNotEmpty) {
  const Corpus& c = TheCorpus();
  std::printf("corpus_diff_test: %s, %zu documents, %zu bytes\n", c.source.c_str(), c.docs.size(), c.bytes);
  ASSERT_GT(c.bytes, 0u) << "nothing to compare in " << c.source;
  ::testing::Test::RecordProperty("corpus", c.source);
  ::testing::Test::RecordProperty("bytes", std::to_string(c.bytes));
}

TEST(CorpusDiffTest, EveryScannerAgreesOnEveryDocument) {
  const Corpus& c = TheCorpus();
  ASSERT_GT(c.bytes, 0u);
  std::set<std::string_view> done;
  for (const FastPattern& known : KnownFastPatterns()) {
    if (!done.insert(known.name).second) continue;  // a respelling of a pattern done already
    auto onig = MakeRegexMatcher(known.pattern);
    ASSERT_TRUE(onig.ok());
    auto fast = known.make();
    size_t compared = 0;
    size_t failures = 0;
    for (size_t d = 0; d < c.docs.size() && failures < 5; ++d) {
      const std::string diff = Difference(*fast, **onig, c.docs[d]);
      if (!diff.empty()) {
        ++failures;
        ADD_FAILURE() << c.source << " document " << d << ": " << diff;
      }
      compared += c.docs[d].size();
    }
    EXPECT_EQ(compared, c.bytes) << known.name;
  }
}

TEST(CorpusDiffTest, DeepSeekStagesAgreeOnTheirPieces) {
  const Corpus& c = TheCorpus();
  ASSERT_GT(c.bytes, 0u);
  const std::string_view stages[] = {kDeepSeekV3DigitsPattern, kDeepSeekV3CjkPattern, kDeepSeekV3MainPattern};
  std::vector<std::unique_ptr<SplitMatcher>> fast;
  std::vector<std::unique_ptr<SplitMatcher>> onig;
  for (std::string_view pattern : stages) {
    fast.push_back(MakeFastMatcher(pattern));
    auto general = MakeRegexMatcher(pattern);
    ASSERT_TRUE(general.ok());
    onig.push_back(std::move(*general));
  }
  size_t failures = 0;
  size_t pieces_compared = 0;
  for (size_t d = 0; d < c.docs.size() && failures < 5; ++d) {
    std::vector<std::string_view> pieces = {c.docs[d]};
    for (size_t stage = 0; stage < 3; ++stage) {
      std::vector<std::string_view> next;
      for (std::string_view piece : pieces) {
        const std::string diff = Difference(*fast[stage], *onig[stage], piece);
        ++pieces_compared;
        if (!diff.empty() && ++failures <= 5) ADD_FAILURE() << c.source << " document " << d << ": " << diff;
        std::vector<Span> spans;
        onig[stage]->FindMatches(piece, &spans);
        for (std::string_view p : IsolatedPieces(piece, spans)) next.push_back(p);
      }
      pieces.swap(next);
    }
  }
  EXPECT_GT(pieces_compared, c.docs.size() * 3);
}

}  // namespace
}  // namespace tokenfeed::tokenizer
