// SentencePiece-style (character-level) BPE from tokenizer.json: byte
// fallback, the unknown token with and without fuse_unk, Metaspace, the
// decoders that undo them, and Llama-2 / Gemma 3 themselves. Expected ids are
// the reference's (tokenizers 0.23.3) for the same file and text; the Python
// parity suite compares whole corpora.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tokenfeed/tokenizer.h"
#include "tokenizer/pretokenize_testing.h"
#include "tokenizer/test_tokenizers.h"
#include "tokenizer/tokenizer_impl.h"

namespace tokenfeed::tokenizer {
namespace {

std::string TinyJson() {
  std::ifstream in(std::string(TOKENFEED_SOURCE_DIR) + "/src/tokenizer/testdata/sentencepiece_tiny.json");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Replaced(std::string s, std::string_view from, std::string_view to) {
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

std::shared_ptr<const Tokenizer> Load(const std::string& json) {
  auto t = Tokenizer::FromJson(json, "sentencepiece_tiny.json");
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? *t : nullptr;
}

std::vector<TokenId> Ids(const Tokenizer& t, std::string_view text) {
  std::vector<TokenId> ids;
  Status s = t.Encode(text, &ids);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return ids;
}

struct Case {
  std::string_view text;
  std::vector<TokenId> ids;
};

void ExpectIds(const Tokenizer& t, const std::vector<Case>& cases) {
  for (const Case& c : cases) EXPECT_EQ(Ids(t, c.text), c.ids) << "text: " << c.text;
}

// Vocabulary: <unk> 0, <s> 1, </s> 2, <0x00>..<0xFF> 3..258, then ▁ a b c
// ab ▁a ▁ab 中 ▁▁ (259..267); merges a+b, ▁+a, ▁a+b, ▁+▁; Metaspace.
TEST(SentencePieceBpeTest, ByteFallbackSpellsUnknownCharactersAsTheirBytes) {
  auto t = Load(TinyJson());
  ASSERT_NE(t, nullptr);
  ExpectIds(*t, {{"ab a", {259, 263, 264}},  // ▁ ab ▁a: a+b outranks ▁+a
                 {"  ab", {259, 259, 263}},  // Metaspace cuts before every ▁, so ▁+▁ never meets
                 {"a中é", {264, 266, 198, 172}},
                 {"xyz a", {259, 123, 124, 125, 264}},
                 {"a</s>b", {264, 2, 259, 261}},  // the text after </s> gets its own ▁
                 {"", {}},
                 {"aab▁b", {264, 263, 259, 261}}});
  auto decoded = t->Decode(Ids(*t, "a中é xyz"));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, "a中é xyz");
}

TEST(SentencePieceBpeTest, UnknownCharactersFuseIntoOneUnknownTokenOnlyWithFuseUnk) {
  const std::string no_fallback = Replaced(TinyJson(), "\"byte_fallback\": true", "\"byte_fallback\": false");
  auto fused = Load(no_fallback);
  ASSERT_NE(fused, nullptr);
  ExpectIds(*fused, {{"a中é", {264, 266, 0}}, {"xyz a", {259, 0, 264}}, {"aab▁b", {264, 263, 259, 261}}});
  auto unfused = Load(Replaced(no_fallback, "\"fuse_unk\": true", "\"fuse_unk\": false"));
  ASSERT_NE(unfused, nullptr);
  ExpectIds(*unfused, {{"a中é", {264, 266, 0}}, {"xyz a", {259, 0, 0, 0, 264}}});
  auto dropped = Load(Replaced(no_fallback, "\"unk_token\": \"<unk>\"", "\"unk_token\": null"));
  ASSERT_NE(dropped, nullptr);
  ExpectIds(*dropped, {{"a中é", {264, 266}}, {"xyz a", {259, 264}}});
  auto decoded = fused->Decode(std::vector<TokenId>{259, 0, 264});
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, "<unk> a");
}

TEST(SentencePieceBpeTest, UnsupportedOptionsFailAtLoadNamingTheJsonPath) {
  const std::string json = TinyJson();
  struct Bad {
    std::string json;
    std::string_view message;
  };
  const std::vector<Bad> bad = {
      {Replaced(json, "\"prepend_scheme\": \"always\"", "\"prepend_scheme\": \"sometimes\""),
       "pre_tokenizer.prepend_scheme: 'sometimes' is not always, first or never"},
      {Replaced(json, "\"replacement\": \"▁\"", "\"replacement\": \"▁▁\""),
       "pre_tokenizer.replacement: must be exactly one character"},
      {Replaced(json, "\"prepend_scheme\": \"always\"", "\"prepend_scheme\": \"first\", \"add_prefix_space\": false"),
       "pre_tokenizer.add_prefix_space: false contradicts prepend_scheme"},
      {Replaced(json, "\"split\": true", "\"split\": 1"), "pre_tokenizer.split: not a boolean"},
      {Replaced(json, "{\"type\": \"Metaspace\"", "{\"type\": \"Whitespace\""),
       "pre_tokenizer.type: Whitespace is not a supported pre-tokenizer"},
      {Replaced(json, "\"dropout\": null", "\"dropout\": 0.1"), "model.dropout: BPE dropout is random"},
      // Byte fallback would give 12 for a tab, and decoding 12 would have two answers.
      {Replaced(json, "\"<0x09>\": 12,", "\"<0x09>\": 12, \"\": 12,"),
       "model.vocab[\"\"]: id 12 is already the id of \"<0x09>\"; each id must name one token"},
      {Replaced(json, "\"c\": 262,", "\"c\": 262, \"c\": 268,"), "model.vocab[\"c\"]: the token appears more than once"},
      // The reference would not prepend to "  x" after Strip took its spaces.
      {Replaced(Replaced(json, "\"normalizer\": null",
                         "\"normalizer\": {\"type\": \"Strip\", \"strip_left\": true, \"strip_right\": false}"),
                "\"prepend_scheme\": \"always\"", "\"prepend_scheme\": \"first\""),
       "pre_tokenizer.prepend_scheme: \"first\" after a normalizer that can remove the text's first characters "
       "(normalizer) is not supported"},
  };
  for (const Bad& b : bad) {
    auto t = Tokenizer::FromJson(b.json, "sp.json");
    ASSERT_FALSE(t.ok()) << b.message;
    EXPECT_NE(t.status().message().find(b.message), std::string::npos) << t.status().ToString();
    EXPECT_NE(t.status().message().find("sp.json"), std::string::npos) << t.status().ToString();
  }
}

TEST(SentencePieceBpeTest, ADecoderThisBuildLacksLeavesEncodingWorking) {
  auto t = Load(Replaced(TinyJson(), "{\"type\": \"Fuse\"}", "{\"type\": \"CTC\"}"));
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(Ids(*t, "ab"), (std::vector<TokenId>{259, 263}));
  auto decoded = t->Decode(std::vector<TokenId>{259});
  EXPECT_EQ(decoded.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(decoded.status().message().find("CTC"), std::string::npos) << decoded.status().ToString();
}

// From the reference on the real files (add_special_tokens=False).
TEST(SentencePieceBpeTest, Llama2MatchesTheReference) {
  auto t = LoadTestTokenizer("llama2");
  if (!t) GTEST_SKIP() << "llama2 tokenizer.json absent (scripts/fetch-tokenizers.sh)";
  ExpectIds(*t, {{"", {}},
                 {" ", {259}},
                 {"Hello world", {22557, 1526}},
                 {" leading space", {28705, 5374, 2764}},
                 {"two  spaces\tand tab\nnewline", {989, 28705, 10599, 12, 391, 7683, 13, 1095, 1081}},
                 {"中文字符串测试", {28705, 28991, 29019, 29031, 29252, 29523, 29584, 29592}},
                 {"😀 emoji 𠀋", {28705, 30575, 877, 27813, 28705, 243, 163, 131, 142}},
                 {"ctl\x01\x7f", {277, 9563, 29534, 30982}},
                 {"a</s>b<s> c", {264, 2, 287, 1, 28705, 277}},
                 {"e\xCC\x81 \xC3\x85", {317, 28949, 15744}}});
  std::vector<TokenId> with_bos;
  EncodeOptions options;
  options.add_special_tokens = true;
  ASSERT_TRUE(t->Encode("hi", &with_bos, options).ok());
  EXPECT_EQ(with_bos, (std::vector<TokenId>{1, 12014}));
  for (std::string_view text : {"two  spaces\tand tab\nnewline", "😀 emoji 𠀋", " leading space"}) {
    auto decoded = t->Decode(Ids(*t, text));
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_EQ(*decoded, text);
  }
  auto specials = t->Decode(Ids(*t, "a</s>b<s> c"));
  ASSERT_TRUE(specials.ok());
  EXPECT_EQ(*specials, "a</s> b<s>  c");  // each text after a special token gets its own ▁
}

TEST(SentencePieceBpeTest, Gemma3MatchesTheReference) {
  auto t = LoadTestTokenizer("gemma3");
  if (!t) GTEST_SKIP() << "gemma3 tokenizer.json absent (scripts/fetch-tokenizers.sh)";
  ExpectIds(*t, {{"", {}},
                 {" ", {236743}},
                 {"Hello world", {9259, 1902}},
                 {" leading space", {5830, 2557}},
                 {"two  spaces\tand tab\nnewline", {13498, 138, 35220, 255968, 624, 6937, 107, 73481}},
                 {"中文字符串测试", {237103, 31818, 238741, 239586, 30203}},
                 {"😀 emoji 𠀋", {242398, 64334, 236743, 478, 398, 366, 377}},
                 {"ctl\x01\x7f", {58514, 249732, 251541}},
                 {"a</s>b<s> c", {236746, 212, 236763, 203, 505}},
                 {"e\xCC\x81 \xC3\x85", {236744, 238288, 44667}}});
  auto decoded = t->Decode(Ids(*t, "two  spaces\tand tab\nnewline 😀 𠀋"));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, "two  spaces\tand tab\nnewline 😀 𠀋");
}

// Without a pre-tokenizer a document is one piece; the model cuts it where
// no merge can join and caches the parts. The cut result must equal the
// plain merge loop over the whole piece.
TEST(SentencePieceBpeTest, CuttingAWholeDocumentGivesThePlainMergeLoopsTokens) {
  for (const char* name : {"llama2", "gemma3"}) {
    auto t = LoadTestTokenizer(name);
    if (!t) GTEST_SKIP() << name << " tokenizer.json absent (scripts/fetch-tokenizers.sh)";
    const auto& model = static_cast<const TokenizerImpl&>(*t).model();
    ASSERT_FALSE(model.byte_level());
    std::string doc;
    // Words, runs of ▁, and long CJK and kana runs (cut only after probing pairs).
    const char* words[] = {"▁the", "▁tokenizer", "▁中文", "字符", "▁😀", "▁▁", "\n", "▁naïve", "▁x", "y", "▁Ωμέγα",
                           "東京都の天気予報によると明日は晴れるでしょう", "데이터베이스관리시스템", "</", "▁</"};
    for (int i = 0; i < 4000; ++i) doc += words[(i * 7 + i / 3) % 15];
    BpeScratch scratch, plain_scratch;
    std::vector<uint32_t> cut, plain;
    model.EncodePiece(doc, &scratch, &cut);
    model.EncodePieceByteLevel(doc, &plain_scratch, &plain);
    EXPECT_EQ(cut, plain) << name;
    EXPECT_GT(cut.size(), 4000u) << name;
  }
}

// The same on real text: the corpus of TOKENFEED_CORPUS_DIR (its first
// 3 MB) or the built-in multilingual sample, each document spelled as
// Llama-2's normalizer leaves it (▁ in front, ▁ for every space).
TEST(SentencePieceBpeTest, CuttingRealDocumentsGivesThePlainMergeLoopsTokens) {
  std::string source;
  auto docs = testing::CorpusOrSample(&source, 3 << 20);
  ASSERT_TRUE(docs.ok()) << docs.status().ToString();
  ASSERT_FALSE(docs->empty()) << source;
  for (const char* name : {"llama2", "gemma3"}) {
    auto t = LoadTestTokenizer(name);
    if (!t) GTEST_SKIP() << name << " tokenizer.json absent (scripts/fetch-tokenizers.sh)";
    const auto& model = static_cast<const TokenizerImpl&>(*t).model();
    BpeScratch scratch, plain_scratch;
    size_t failures = 0;
    for (size_t d = 0; d < docs->size() && failures < 3; ++d) {
      std::string piece = "\xE2\x96\x81";
      for (char c : (*docs)[d]) {
        if (c == ' ') {
          piece += "\xE2\x96\x81";
        } else {
          piece += c;
        }
      }
      std::vector<uint32_t> cut, plain;
      model.EncodePiece(piece, &scratch, &cut);
      model.EncodePieceByteLevel(piece, &plain_scratch, &plain);
      if (cut != plain) {
        ++failures;
        ADD_FAILURE() << name << ": " << source << " document " << d << " differs";
      }
    }
  }
}

// A megabyte without a single cut point (one character repeated) takes the
// O(n log n) heap loop; the test checks the result's shape, not its time.
TEST(SentencePieceBpeTest, AMegabyteWithoutSpacesEncodes) {
  auto t = LoadTestTokenizer("llama2");
  if (!t) GTEST_SKIP() << "llama2 tokenizer.json absent (scripts/fetch-tokenizers.sh)";
  const std::string doc(1 << 20, 'a');
  std::vector<TokenId> ids = Ids(*t, doc);
  ASSERT_FALSE(ids.empty());
  auto decoded = t->Decode(ids);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, doc);
}

}  // namespace
}  // namespace tokenfeed::tokenizer
