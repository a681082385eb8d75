#include "tokenizer/bpe_model.h"

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/utf8.h"
#include "tokenizer/byte_level_alphabet.h"
#include "tokenizer/tokenizer_impl.h"
#include "tokenizer/test_tokenizers.h"

namespace tokenfeed::tokenizer {
namespace {

std::string Spell(std::string_view bytes) {
  std::string s;
  for (unsigned char b : bytes) AppendUtf8(kByteLevelAlphabet.byte_to_char[b], &s);
  return s;
}

// A tiny byte-level vocabulary: bytes a..e plus merges, given in rank order.
// Without all_bytes, byte 0xFF has no token.
BpeModel TinyModel(const std::vector<std::pair<std::string, std::string>>& merges, bool ignore_merges = false,
                   bool all_bytes = true) {
  BpeSpec spec;
  uint32_t id = 0;
  for (int b = 0; b < (all_bytes ? 256 : 255); ++b) {
    spec.vocab.emplace_back(Spell(std::string(1, static_cast<char>(b))), id++);
  }
  for (const auto& [a, b] : merges) {
    spec.merges.emplace_back(Spell(a), Spell(b));
    spec.vocab.emplace_back(Spell(a + b), id++);
  }
  spec.ignore_merges = ignore_merges;
  auto m = BpeModel::Build(spec);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return std::move(m).value();
}

std::vector<std::string> Tokens(const BpeModel& m, std::string_view piece, bool cached = false) {
  BpeScratch scratch;
  std::vector<uint32_t> ids;
  if (cached) {
    m.EncodePiece(piece, &scratch, &ids);
  } else {
    m.EncodePieceUncached(piece, &scratch, &ids);
  }
  std::vector<std::string> out;
  for (uint32_t id : ids) out.emplace_back(m.DecodedBytes(id));
  return out;
}

TEST(BpeModelTest, LowestRankFirst) {
  // "bc" has the lowest rank, so "abc" becomes a + bc, not ab + c.
  BpeModel m = TinyModel({{"b", "c"}, {"a", "b"}, {"a", "bc"}});
  EXPECT_EQ(Tokens(m, "abc"), (std::vector<std::string>{"abc"}));
  BpeModel m2 = TinyModel({{"b", "c"}, {"a", "b"}});
  EXPECT_EQ(Tokens(m2, "abc"), (std::vector<std::string>{"a", "bc"}));
}

TEST(BpeModelTest, LeftmostFirstAmongEqualRanks) {
  BpeModel m = TinyModel({{"a", "a"}});
  EXPECT_EQ(Tokens(m, "aaa"), (std::vector<std::string>{"aa", "a"}));
  EXPECT_EQ(Tokens(m, "aaaaa"), (std::vector<std::string>{"aa", "aa", "a"}));
}

TEST(BpeModelTest, IgnoreMergesTakesWholeWords) {
  // "abc" is in the vocabulary (via merges the word cannot reach in order):
  // with ignore_merges the whole word wins.
  BpeModel plain = TinyModel({{"b", "c"}, {"a", "b"}, {"ab", "c"}});
  EXPECT_EQ(Tokens(plain, "abc"), (std::vector<std::string>{"a", "bc"}));
  BpeModel ignoring = TinyModel({{"b", "c"}, {"a", "b"}, {"ab", "c"}}, /*ignore_merges=*/true);
  EXPECT_EQ(Tokens(ignoring, "abc"), (std::vector<std::string>{"abc"}));
}

TEST(BpeModelTest, LaterDuplicateMergeReplacesEarlier) {
  BpeSpec spec;
  uint32_t id = 0;
  for (int b = 0; b < 256; ++b) spec.vocab.emplace_back(Spell(std::string(1, static_cast<char>(b))), id++);
  spec.vocab.emplace_back(Spell("ab"), id++);
  spec.vocab.emplace_back(Spell("bc"), id++);
  spec.merges = {{Spell("a"), Spell("b")}, {Spell("b"), Spell("c")}, {Spell("a"), Spell("b")}};
  auto m = BpeModel::Build(spec);
  ASSERT_TRUE(m.ok());
  // (a, b) now has rank 2 > rank of (b, c): "abc" -> a + bc.
  EXPECT_EQ(Tokens(*m, "abc"), (std::vector<std::string>{"a", "bc"}));
}

TEST(BpeModelTest, MergeOutsideVocabularyIsAnError) {
  BpeSpec spec;
  spec.vocab = {{"a", 0}, {"b", 1}};
  spec.merges = {{"a", "b"}};
  auto m = BpeModel::Build(spec);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("merged token 'ab' is not in model.vocab"), std::string::npos);
  spec.merges = {{"a", "z"}};
  EXPECT_NE(BpeModel::Build(spec).status().message().find("token 'z' is not in model.vocab"), std::string::npos);
}

TEST(BpeModelTest, AnIdOfTwoTokensOrATokenOfTwoIdsIsRefused) {
  BpeSpec spec;
  spec.vocab = {{"a", 0}, {"b", 1}, {"c", 1}};
  auto shared_id = BpeModel::Build(spec);
  ASSERT_FALSE(shared_id.ok());
  EXPECT_NE(shared_id.status().message().find("model.vocab[\"c\"]: id 1 is already the id of \"b\""), std::string::npos)
      << shared_id.status().ToString();
  spec.vocab = {{"a\t\"", 0}, {"b", 1}, {"a\t\"", 2}};
  auto twice = BpeModel::Build(spec);
  ASSERT_FALSE(twice.ok());
  // The token is quoted as a JSON string: a tab or a quote inside it is escaped.
  EXPECT_NE(twice.status().message().find("model.vocab[\"a\\t\\\"\"]: the token appears more than once"),
            std::string::npos)
      << twice.status().ToString();
}

TEST(BpeModelTest, AnIdBeyondTheSupportedRangeIsRefusedBeforeAnyTableIsSized) {
  // 4,000,000,000 would size two per-id tables at 64 GB; the range check
  // comes first (found by fuzz/tokenizer_json, corpus/huge_id.json).
  BpeSpec spec;
  spec.vocab = {{"a", 0}, {"b", 4'000'000'000u}};
  auto m = BpeModel::Build(spec);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(m.status().message().find("the vocabulary has 4000000001 ids"), std::string::npos)
      << m.status().ToString();
}

TEST(BpeModelTest, LongPiecesMatchShortPath) {
  // Pieces above the array path's limit take the heap; both must agree.
  BpeModel m = TinyModel({{"a", "b"}, {"ab", "ab"}, {"b", "a"}, {"ba", "ba"}, {"abab", "abab"}, {"a", "a"}});
  std::mt19937 rng(1);
  for (int round = 0; round < 200; ++round) {
    std::string s(1 + rng() % 600, 'a');
    for (char& c : s) c = "ab"[rng() % 2];
    BpeScratch scratch;
    std::vector<uint32_t> whole;
    m.EncodePieceUncached(s, &scratch, &whole);
    // Reference: the straightforward algorithm on the same rules.
    std::vector<std::string> syms;
    for (char c : s) syms.emplace_back(1, c);
    std::vector<std::pair<std::string, std::string>> rules = {{"a", "b"}, {"ab", "ab"}, {"b", "a"},
                                                              {"ba", "ba"}, {"abab", "abab"}, {"a", "a"}};
    while (true) {
      size_t best_rank = rules.size(), at = 0;
      for (size_t i = 0; i + 1 < syms.size(); ++i) {
        for (size_t r = 0; r < best_rank; ++r) {
          if (rules[r].first == syms[i] && rules[r].second == syms[i + 1]) {
            best_rank = r;
            at = i;
            break;
          }
        }
      }
      if (best_rank == rules.size()) break;
      syms[at] += syms[at + 1];
      syms.erase(syms.begin() + static_cast<long>(at) + 1);
    }
    std::vector<std::string> got;
    for (uint32_t id : whole) got.emplace_back(m.DecodedBytes(id));
    ASSERT_EQ(got, syms) << "length " << s.size();
  }
}

TEST(BpeModelTest, CacheGivesTheSameResult) {
  BpeModel m = TinyModel({{"a", "b"}, {"c", "d"}, {"ab", "cd"}});
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(Tokens(m, "abcd", /*cached=*/true), (std::vector<std::string>{"abcd"}));
    EXPECT_EQ(Tokens(m, "abcde", /*cached=*/true), (std::vector<std::string>{"abcd", "e"}));
  }
}

// EncodeKeyedPiece with the key PrefetchPiece made (reading past the piece)
// gives what EncodePiece gives, at every length around the cache's limits,
// on first sight and from the cache, with every byte a token and without;
// the key is the one made from the piece alone.
TEST(BpeModelTest, KeyMadeAheadGivesTheSameIds) {
  for (bool all_bytes : {true, false}) {
    BpeModel m = TinyModel({{"a", "b"}, {"c", "d"}, {"ab", "cd"}, {"e", "e"}}, false, all_bytes);
    BpeScratch ahead, plain;
    for (int pass = 0; pass < 2; ++pass) {
      for (size_t len : {0, 1, 2, 3, 8, 15, 16, 17, 95, 96, 97, 200}) {
        std::string piece;
        for (size_t i = 0; i < len; ++i) piece += "abcdee"[(i * 7 + len) % 6];
        std::vector<uint32_t> with_key, without, uncached;
        // The piece with text after it, which its key may read.
        const std::string text = piece + "abcdeeabcdeeabcdee";
        const std::string_view in_text(text.data(), piece.size());
        const WordCache::Key key = m.PrefetchPiece(in_text, /*padded=*/true, &ahead);
        // A key for exactly the pieces EncodePiece looks up.
        const bool probed = len >= 1 && len <= WordCache::kMaxWordBytes;
        EXPECT_EQ(key.len, probed ? len : 0) << all_bytes << " " << len;
        if (probed) {
          const WordCache::Key alone = WordCache::MakeKey(piece);
          EXPECT_EQ(key.w0, alone.w0) << len;
          EXPECT_EQ(key.w1, alone.w1) << len;
          EXPECT_EQ(key.hash, alone.hash) << len;
        }
        m.EncodeKeyedPiece(in_text, key, &ahead, &with_key);
        m.EncodePiece(piece, &plain, &without);
        m.EncodePieceUncached(piece, &plain, &uncached);
        EXPECT_EQ(with_key, uncached) << all_bytes << " " << len;
        EXPECT_EQ(without, uncached) << all_bytes << " " << len;
        EXPECT_EQ(with_key.empty(), len == 0);
      }
    }
    EXPECT_GT(ahead.cache.size(), 0u);
  }
}

// The character-level shortcut must equal the byte-level loop on real
// vocabularies, for text in many scripts (and random mixtures of them).
class CharLevelDifferentialTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CharLevelDifferentialTest, MatchesByteLevelLoop) {
  auto tok = LoadTestTokenizer(GetParam());
  if (!tok) GTEST_SKIP() << "tokenizer files not present (run scripts/setup.sh)";
  const BpeModel& m = static_cast<const TokenizerImpl&>(*tok).model();
  static const char32_t kRanges[][2] = {
      {0x4E00, 0x9FFF}, {0x3040, 0x30FF}, {0xAC00, 0xD7A3}, {0x0400, 0x04FF}, {0x0600, 0x06FF},
      {0x0900, 0x097F}, {0x00C0, 0x024F}, {0x0370, 0x03FF}, {0x0E00, 0x0E7F}, {0x3000, 0x303F},
      {0xFF00, 0xFFEF}, {0x0020, 0x007E}, {0x0080, 0x07FF}, {0x0800, 0xFFFD}};
  std::mt19937 rng(42);
  BpeScratch scratch;
  size_t compared = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string s;
    size_t chars = 1 + rng() % 40;
    int script = static_cast<int>(rng() % std::size(kRanges));
    for (size_t c = 0; c < chars; ++c) {
      int r = rng() % 4 == 0 ? static_cast<int>(rng() % std::size(kRanges)) : script;
      char32_t cp = kRanges[r][0] + rng() % (kRanges[r][1] - kRanges[r][0] + 1);
      if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0x4E00;
      AppendUtf8(cp, &s);
    }
    std::vector<uint32_t> fast, slow;
    m.EncodePieceUncached(s, &scratch, &fast);
    m.EncodePieceByteLevel(s, &scratch, &slow);
    ASSERT_EQ(fast, slow) << "piece: " << s;
    ++compared;
  }
  EXPECT_EQ(compared, 20000u);
}

INSTANTIATE_TEST_SUITE_P(Vocabularies, CharLevelDifferentialTest,
                         ::testing::Values("deepseek_v3", "llama3", "qwen3"));

}  // namespace
}  // namespace tokenfeed::tokenizer
