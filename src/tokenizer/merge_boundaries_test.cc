#include "tokenizer/merge_boundaries.h"

#include <map>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/utf8.h"
#include "tokenizer/bpe_model.h"
#include "tokenizer/byte_level_alphabet.h"
#include "tokenizer/test_tokenizers.h"
#include "tokenizer/tokenizer_impl.h"

namespace tokenfeed::tokenizer {
namespace {

std::string Spell(std::string_view bytes) {
  std::string s;
  for (unsigned char b : bytes) AppendUtf8(kByteLevelAlphabet.byte_to_char[b], &s);
  return s;
}

std::string Utf8(char32_t cp) {
  std::string s;
  AppendUtf8(cp, &s);
  return s;
}

// A byte-level model with every byte and the given merges, in rank order.
BpeModel ModelWithMerges(const std::vector<std::pair<std::string, std::string>>& merges) {
  BpeSpec spec;
  uint32_t id = 0;
  for (int b = 0; b < 256; ++b) spec.vocab.emplace_back(Spell(std::string(1, static_cast<char>(b))), id++);
  std::map<std::string, bool> seen;
  for (const auto& [a, b] : merges) {
    spec.merges.emplace_back(Spell(a), Spell(b));
    if (a.size() + b.size() > 1 && !seen[a + b]) {
      seen[a + b] = true;
      spec.vocab.emplace_back(Spell(a + b), id++);
    }
  }
  auto m = BpeModel::Build(spec);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return std::move(m).value();
}

std::unique_ptr<MergeBoundaries> BoundariesOf(const std::vector<std::pair<std::string, std::string>>& merges,
                                              std::vector<std::string>* tokens) {
  std::vector<MergeTable::Rule> rules;
  std::map<std::string, uint32_t> ids;
  auto id_of = [&](const std::string& t) {
    auto [it, inserted] = ids.emplace(t, static_cast<uint32_t>(tokens->size()));
    if (inserted) tokens->push_back(t);
    return it->second;
  };
  for (const auto& [a, b] : merges) rules.push_back({id_of(a), id_of(b), id_of(a + b)});
  return MergeBoundaries::Build(rules, [tokens](uint32_t id) { return std::string_view((*tokens)[id]); });
}

// U+7684 的 = E7 9A 84, U+4E00 一 = E4 B8 80, U+4E01 丁 = E4 B8 81,
// U+4EBA 人 = E4 BA BA, U+00E9 é = C3 A9.
TEST(MergeBoundariesTest, WholeAndPartialCharacterRules) {
  std::vector<std::string> tokens;
  auto b = BoundariesOf({{"\xE7\x9A\x84", "\xE4\xB8"},  // 的 + the first two bytes of 一 / 丁
                         {"a", "b"},
                         {"\x84", "x"},                 // a tail of 的 (or of any character ending in 84) + x
                         {"c", "\xC3\xA9"},             // c + é, whole characters
                         {"\xE4\xB8", "\x80"}},         // inside one character: joins no boundary
                        &tokens);
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(b->CanJoin(U'的', U'一'));
  EXPECT_TRUE(b->CanJoin(U'的', U'丁'));
  EXPECT_FALSE(b->CanJoin(U'的', U'人'));
  EXPECT_FALSE(b->CanJoin(U'一', U'的'));
  EXPECT_TRUE(b->CanJoin('a', 'b'));
  EXPECT_FALSE(b->CanJoin('b', 'a'));
  EXPECT_TRUE(b->CanJoin(U'的', 'x'));
  EXPECT_TRUE(b->CanJoin(0x1084, 'x'));  // E1 82 84 also ends in 84
  EXPECT_FALSE(b->CanJoin(U'一', 'x'));
  EXPECT_TRUE(b->CanJoin('c', U'é'));
  EXPECT_FALSE(b->CanJoin('c', U'ö'));
  EXPECT_FALSE(b->CanJoin(U'一', 0x80));
  // Outside the Basic Multilingual Plane every boundary may join.
  EXPECT_TRUE(b->CanJoin(0x1F600, 'a'));
  EXPECT_TRUE(b->CanJoin('a', 0x1F600));
}

// A rule whose left side ends inside a character (a lead byte without all
// its continuation bytes) or whose right side starts with a continuation
// byte can never meet at a character boundary.
TEST(MergeBoundariesTest, RulesThatCannotMeetABoundaryAreIgnored) {
  std::vector<std::string> tokens;
  auto b = BoundariesOf({{"\xE4", "\xB8"}, {"x\xE4", "y"}, {"z", "\xB8\x80"}}, &tokens);
  ASSERT_NE(b, nullptr);
  for (char32_t l : {U'x', U'z', U'一', U'丁'}) {
    for (char32_t r : {U'x', U'y', U'一', U'丁', char32_t{0x80}}) EXPECT_FALSE(b->CanJoin(l, r)) << uint32_t{l} << " " << uint32_t{r};
  }
}

// The naive algorithm: merge the lowest-ranked adjacent pair, leftmost first.
std::vector<std::string> NaiveBpe(std::string_view piece, const std::vector<std::pair<std::string, std::string>>& merges) {
  std::map<std::pair<std::string, std::string>, size_t> rank;
  for (size_t r = 0; r < merges.size(); ++r) rank[merges[r]] = r;  // a repeated pair keeps its last rank
  std::vector<std::string> syms;
  for (char c : piece) syms.emplace_back(1, c);
  while (true) {
    size_t best = SIZE_MAX, at = 0;
    for (size_t i = 0; i + 1 < syms.size(); ++i) {
      auto it = rank.find({syms[i], syms[i + 1]});
      if (it != rank.end() && it->second < best) {
        best = it->second;
        at = i;
      }
    }
    if (best == SIZE_MAX) return syms;
    syms[at] += syms[at + 1];
    syms.erase(syms.begin() + static_cast<long>(at) + 1);
  }
}

// Random vocabularies "trained" on text of a few characters that share lead
// and continuation bytes, so that many rules join partial characters; every
// short string over those characters, and longer random ones, must encode
// through the cache (whole pieces and their parts) exactly as naive BPE does.
TEST(MergeBoundariesTest, CachedPartsEqualNaiveBpeOnRandomVocabularies) {
  const std::vector<std::string> alphabet = {"a", " ", Utf8(U'é'), Utf8(U'ö'), Utf8(U'的'), Utf8(U'一'),
                                             Utf8(U'丁'), Utf8(U'人'), Utf8(U'ア'), Utf8(0x1084)};
  std::mt19937 rng(2024);
  auto random_text = [&](size_t chars) {
    std::string s;
    for (size_t i = 0; i < chars; ++i) s += alphabet[rng() % alphabet.size()];
    return s;
  };
  size_t pieces_cut = 0, compared = 0;
  for (int vocab = 0; vocab < 40; ++vocab) {
    std::vector<std::pair<std::string, std::string>> merges;
    std::vector<std::string> training;
    for (int i = 0; i < 30; ++i) training.push_back(random_text(1 + rng() % 12));
    const size_t rule_count = 10 + rng() % 60;
    while (merges.size() < rule_count) {
      // One adjacent pair of the current segmentation of a training text.
      const auto syms = NaiveBpe(training[rng() % training.size()], merges);
      if (syms.size() < 2) continue;
      const size_t i = rng() % (syms.size() - 1);
      merges.emplace_back(syms[i], syms[i + 1]);
    }
    const BpeModel m = ModelWithMerges(merges);
    std::vector<std::string> inputs;
    for (const std::string& a : alphabet) {
      for (const std::string& b : alphabet) {
        for (const std::string& c : alphabet) inputs.push_back(a + b + c);
      }
    }
    for (int i = 0; i < 300; ++i) inputs.push_back(random_text(4 + rng() % 40));
    BpeScratch scratch;
    for (int pass = 0; pass < 2; ++pass) {  // the second pass finds the parts in the cache
      for (const std::string& in : inputs) {
        const size_t cached_before = scratch.cache.size();
        std::vector<uint32_t> ids;
        m.EncodePiece(in, &scratch, &ids);
        if (pass == 0 && scratch.cache.size() > cached_before + 1) ++pieces_cut;
        std::vector<std::string> got;
        for (uint32_t id : ids) got.emplace_back(m.DecodedBytes(id));
        ASSERT_EQ(got, NaiveBpe(in, merges)) << "vocabulary " << vocab << ", piece '" << in << "'";
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 80000u);
  // The property is only tested where pieces fall apart.
  EXPECT_GT(pieces_cut, 1000u);
}

// Real vocabularies: CJK text encoded through the cache, parts included,
// equals the byte-level loop on the whole piece.
class MergeBoundariesVocabularyTest : public ::testing::TestWithParam<std::string> {};

TEST_P(MergeBoundariesVocabularyTest, CachedPartsEqualTheByteLevelLoop) {
  auto tok = LoadTestTokenizer(GetParam());
  if (!tok) GTEST_SKIP() << "tokenizer files not present (run scripts/setup.sh)";
  const BpeModel& m = static_cast<const TokenizerImpl&>(*tok).model();
  // Mostly characters of one script, so that words of the vocabulary occur;
  // some text made of the vocabulary's own multi-byte tokens, so that its
  // rules across characters (partial ones included) get their chance.
  static const char32_t kRanges[][2] = {{0x4E00, 0x4FFF}, {0x3040, 0x30FF}, {0xAC00, 0xACFF},
                                        {0x0400, 0x045F}, {0x0020, 0x007E}, {0x3000, 0x303F}};
  std::vector<std::string> multibyte_tokens;
  for (uint32_t id = 0; id < m.id_limit(); ++id) {
    std::string_view b = m.DecodedBytes(id);
    bool high = false;
    for (unsigned char c : b) high |= c >= 0x80;
    if (high && b.size() >= 2) multibyte_tokens.emplace_back(b);
  }
  ASSERT_GT(multibyte_tokens.size(), 1000u);
  std::mt19937 rng(7);
  BpeScratch scratch;
  size_t compared = 0;
  for (int round = 0; round < 6000; ++round) {
    std::string s;
    if (round % 2 == 0) {
      const auto& range = kRanges[rng() % std::size(kRanges)];
      const size_t chars = 2 + rng() % 30;
      for (size_t c = 0; c < chars; ++c) AppendUtf8(range[0] + rng() % (range[1] - range[0] + 1), &s);
    } else {
      const size_t parts = 2 + rng() % 8;
      for (size_t k = 0; k < parts; ++k) s += multibyte_tokens[rng() % multibyte_tokens.size()];
      std::string valid;
      AppendRepairedUtf8(s, &valid);
      s = valid;
    }
    std::vector<uint32_t> cached, slow;
    m.EncodePiece(s, &scratch, &cached);
    m.EncodePieceByteLevel(s, &scratch, &slow);
    ASSERT_EQ(cached, slow) << "piece: " << s;
    ++compared;
  }
  EXPECT_EQ(compared, 6000u);
}

INSTANTIATE_TEST_SUITE_P(Vocabularies, MergeBoundariesVocabularyTest,
                         ::testing::Values("deepseek_v3", "llama3", "qwen3"));

// QuickCanJoin answers from the right character alone when few characters
// can join it from the left, and agrees with CanJoin whenever it answers.
TEST(MergeBoundariesTest, QuickCanJoinKnowsCharactersThatFewJoinAndDefersTheRest) {
  std::vector<std::string> tokens;
  const std::string sp = "\xE2\x96\x81";  // ▁
  auto b = BoundariesOf({{sp, "a"}, {sp, sp}, {"a", "b"}, {"x", "y"}, {"a", "y"}, {"b", "y"}, {"c", "y"}}, &tokens);
  ASSERT_NE(b, nullptr);
  const char32_t kSp = U'\u2581';
  EXPECT_EQ(b->QuickCanJoin(U'a', kSp), 0);    // only ▁ joins ▁ from the left
  EXPECT_EQ(b->QuickCanJoin(kSp, kSp), 1);
  EXPECT_EQ(b->QuickCanJoin(U'a', U'b'), 1);
  EXPECT_EQ(b->QuickCanJoin(U'q', U'b'), 0);
  EXPECT_EQ(b->QuickCanJoin(U'q', U'z'), 0);   // nothing joins z
  EXPECT_EQ(b->QuickCanJoin(U'a', U'y'), -1);  // four characters join y: CanJoin decides
  EXPECT_TRUE(b->CanJoin(U'a', U'y'));
  EXPECT_FALSE(b->CanJoin(U'q', U'y'));
  EXPECT_EQ(b->QuickCanJoin(U'a', U'\U0001F600'), -1);  // outside the table
  for (char32_t l : {U'a', U'b', U'q', kSp}) {
    for (char32_t r : {U'a', U'b', U'z', kSp}) {
      const int quick = b->QuickCanJoin(l, r);
      if (quick >= 0) {
        EXPECT_EQ(quick != 0, b->CanJoin(l, r)) << static_cast<uint32_t>(l) << " " << static_cast<uint32_t>(r);
      }
    }
  }
}

}  // namespace
}  // namespace tokenfeed::tokenizer
