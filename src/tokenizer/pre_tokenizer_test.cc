#include "tokenizer/pre_tokenizer.h"

#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tokenizer/fast_matchers.h"
#include "tokenizer/pretokenize_testing.h"
#include "tokenizer/test_tokenizers.h"

namespace tokenfeed::tokenizer {
namespace {

std::vector<PreTokenizerStage> DeepSeekStages(bool fast) {
  std::vector<PreTokenizerStage> stages;
  for (std::string_view pattern : {kDeepSeekV3DigitsPattern, kDeepSeekV3CjkPattern, kDeepSeekV3MainPattern}) {
    PreTokenizerStage st;
    st.kind = PreTokenizerStage::Kind::kSplit;
    auto m = MakeSplitMatcher(pattern, fast);
    EXPECT_TRUE(m.ok());
    st.matcher = std::move(*m);
    stages.push_back(std::move(st));
  }
  PreTokenizerStage byte_level;
  byte_level.kind = PreTokenizerStage::Kind::kByteLevel;
  stages.push_back(std::move(byte_level));
  return stages;
}

std::vector<std::string> Pieces(const PreTokenizer& pre, std::string_view text, bool at_input_start = true) {
  PreTokenizeScratch scratch;
  std::vector<std::string_view> pieces;
  pre.Run(text, at_input_start, &scratch, &pieces);
  return std::vector<std::string>(pieces.begin(), pieces.end());
}

TEST(PreTokenizerTest, DeepSeekStagesRunFusedOnlyWithTheirScanners) {
  PreTokenizer fused(DeepSeekStages(/*fast=*/true));
  EXPECT_TRUE(fused.fused());
  EXPECT_EQ(fused.stage_count(), 3u);  // the ByteLevel stage changes nothing
  EXPECT_EQ(fused.Describe(),
            "Split(fast:deepseek-v3-digits) > Split(fast:deepseek-v3-cjk) > Split(fast:deepseek-v3-main) > ByteLevel");
  EXPECT_FALSE(PreTokenizer(DeepSeekStages(/*fast=*/true), /*allow_fused=*/false).fused());
  EXPECT_FALSE(PreTokenizer(DeepSeekStages(/*fast=*/false)).fused());
  // Another behaviour on one stage: not the known sequence.
  std::vector<PreTokenizerStage> changed = DeepSeekStages(/*fast=*/true);
  changed[1].behavior = SplitBehavior::kMergedWithNext;
  EXPECT_FALSE(PreTokenizer(std::move(changed)).fused());
  std::vector<PreTokenizerStage> prefixed = DeepSeekStages(/*fast=*/true);
  prefixed.back().add_prefix_space = true;
  PreTokenizer with_space(std::move(prefixed));
  EXPECT_FALSE(with_space.fused());
  EXPECT_EQ(Pieces(with_space, "a1"), (std::vector<std::string>{" a", " 1"}));
}

// Fused, staged with the fast scanners, and staged with Oniguruma agree.
TEST(PreTokenizerTest, FusedDeepSeekEqualsItsStages) {
  const PreTokenizer fused(DeepSeekStages(/*fast=*/true));
  const PreTokenizer staged(DeepSeekStages(/*fast=*/true), /*allow_fused=*/false);
  const PreTokenizer onig(DeepSeekStages(/*fast=*/false));
  std::mt19937_64 rng(5);
  std::vector<std::string> texts;
  for (int i = 0; i < 2000; ++i) texts.push_back(testing::RandomText(rng, 1 + rng() % 200));
  auto sample = testing::BuiltinSampleDocuments();
  ASSERT_TRUE(sample.ok());
  texts.insert(texts.end(), sample->begin(), sample->end());
  for (const std::string& t : texts) {
    const auto want = Pieces(onig, t);
    ASSERT_EQ(Pieces(staged, t), want) << t;
    ASSERT_EQ(Pieces(fused, t), want) << t;
  }
}

// Whole tokenizers: ids with the fused pass equal ids with the general path.
TEST(PreTokenizerTest, DeepSeekTokenizerEncodesTheSameWithoutFastScanners) {
  auto fast = LoadTestTokenizer("deepseek_v3");
  TokenizerOptions general_options;
  general_options.fast_pretokenizers = false;
  auto general = LoadTestTokenizer("deepseek_v3", general_options);
  if (!fast || !general) GTEST_SKIP() << "tokenizer files not present (run scripts/setup.sh)";
  std::string source;
  auto docs = testing::CorpusOrSample(&source, size_t{1} << 20);
  ASSERT_TRUE(docs.ok());
  for (const std::string& d : *docs) {
    std::vector<TokenId> a, b;
    ASSERT_TRUE(fast->Encode(d, &a).ok());
    ASSERT_TRUE(general->Encode(d, &b).ok());
    ASSERT_EQ(a, b) << source << ": " << d.substr(0, 200);
  }
}

// Expected pieces from the reference (tokenizers 0.23.3, Metaspace "▁").
PreTokenizer Metaspace(PrependScheme prepend, bool split) {
  std::vector<PreTokenizerStage> stages(1);
  stages[0].kind = PreTokenizerStage::Kind::kMetaspace;
  stages[0].replacement = "\xE2\x96\x81";
  stages[0].prepend = prepend;
  stages[0].split = split;
  return PreTokenizer(std::move(stages));
}

TEST(PreTokenizerTest, MetaspaceReplacesSpacesAndCutsBeforeEachReplacement) {
  using V = std::vector<std::string>;
  PreTokenizer always = Metaspace(PrependScheme::kAlways, true);
  EXPECT_EQ(Pieces(always, "hello world"), (V{"▁hello", "▁world"}));
  EXPECT_EQ(Pieces(always, " hi"), (V{"▁hi"}));            // a leading space is the prefix
  EXPECT_EQ(Pieces(always, "x  y"), (V{"▁x", "▁", "▁y"}));  // each replacement starts a piece
  EXPECT_EQ(Pieces(always, "▁a"), (V{"▁a"}));               // already there: nothing added
  EXPECT_EQ(Pieces(always, "tail "), (V{"▁tail", "▁"}));
  EXPECT_EQ(Pieces(always, "b", /*at_input_start=*/false), (V{"▁b"}));
  EXPECT_EQ(Pieces(always, ""), V{});
  PreTokenizer first = Metaspace(PrependScheme::kFirst, true);
  EXPECT_EQ(Pieces(first, "a b"), (V{"▁a", "▁b"}));
  EXPECT_EQ(Pieces(first, "a b", /*at_input_start=*/false), (V{"a", "▁b"}));
  PreTokenizer never = Metaspace(PrependScheme::kNever, true);
  EXPECT_EQ(Pieces(never, "hello world"), (V{"hello", "▁world"}));
  PreTokenizer whole = Metaspace(PrependScheme::kAlways, false);
  EXPECT_EQ(Pieces(whole, "x  y"), (V{"▁x▁▁y"}));
  EXPECT_EQ(always.Describe(), "Metaspace(▁, prepend=always, split)");
}

TEST(PreTokenizerTest, MetaspaceAfterASplitPrependsOnlyToTheInputsFirstPieceWhenFirst) {
  std::vector<PreTokenizerStage> stages(2);
  stages[0].kind = PreTokenizerStage::Kind::kSplit;
  auto digits = MakeSplitMatcher("\\d+", /*fast=*/false);
  ASSERT_TRUE(digits.ok());
  stages[0].matcher = std::move(*digits);
  stages[1].kind = PreTokenizerStage::Kind::kMetaspace;
  stages[1].replacement = "_";
  stages[1].prepend = PrependScheme::kFirst;
  PreTokenizer pre(std::move(stages));
  using V = std::vector<std::string>;
  EXPECT_EQ(Pieces(pre, "ab12cd ef"), (V{"_ab", "12", "cd", "_ef"}));
  EXPECT_EQ(Pieces(pre, "ab12cd ef", /*at_input_start=*/false), (V{"ab", "12", "cd", "_ef"}));
}

}  // namespace
}  // namespace tokenfeed::tokenizer
