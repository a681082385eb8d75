#include "document/document_encoder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tokenizer/test_tokenizers.h"

namespace tokenfeed::document {
namespace {

TEST(DocumentEncoderTest, DocumentTokensGoBetweenBosAndEosInEncodeAndEncodeBatch) {
  auto tok = tokenizer::LoadTestTokenizer("deepseek_v3");
  if (!tok) GTEST_SKIP() << "tokenizer files not fetched";
  DocumentOptions options;
  options.add_bos = true;
  options.add_eos = true;
  auto enc = DocumentEncoder::Create(tok, options, "deepseek_v3/tokenizer.json");
  ASSERT_TRUE(enc.ok()) << enc.status().ToString();
  std::vector<TokenId> plain;
  ASSERT_TRUE(tok->Encode("数据管道 feeds the GPUs", &plain, {}).ok());
  std::vector<TokenId> ids;
  ASSERT_TRUE(enc->Encode("数据管道 feeds the GPUs", &ids).ok());
  ASSERT_EQ(ids.size(), plain.size() + 2);
  EXPECT_EQ(ids.front(), *tok->bos_id());
  EXPECT_EQ(ids.back(), *tok->eos_id());
  EXPECT_EQ(std::vector<TokenId>(ids.begin() + 1, ids.end() - 1), plain);

  std::vector<std::string_view> texts = {"数据管道 feeds the GPUs", "", "x"};
  std::vector<std::vector<TokenId>> batch;
  ASSERT_TRUE(enc->EncodeBatch(texts, &batch, 2).ok());
  EXPECT_EQ(batch[0], ids);
  EXPECT_EQ(batch[1], (std::vector<TokenId>{*tok->bos_id(), *tok->eos_id()}));
}

TEST(DocumentEncoderTest, SpecialTokenTextInADocumentIsPlainTextUnlessKept) {
  auto tok = tokenizer::LoadTestTokenizer("deepseek_v3");
  if (!tok) GTEST_SKIP() << "tokenizer files not fetched";
  const std::string eos_text = tok->IdToToken(*tok->eos_id()).value();
  auto split = DocumentEncoder::Create(tok, {}, "t");
  ASSERT_TRUE(split.ok());
  std::vector<TokenId> ids;
  ASSERT_TRUE(split->Encode(eos_text, &ids).ok());
  EXPECT_GT(ids.size(), 1u);  // spelled out, never the control token
  for (TokenId id : ids) EXPECT_NE(id, *tok->eos_id());

  DocumentOptions keep;
  keep.keep_special_tokens = true;
  auto kept = DocumentEncoder::Create(tok, keep, "t");
  ASSERT_TRUE(kept.ok());
  ids.clear();
  ASSERT_TRUE(kept->Encode(eos_text, &ids).ok());
  EXPECT_EQ(ids, std::vector<TokenId>{*tok->eos_id()});
}

TEST(DocumentEncoderTest, TheUtf8PolicyIsApplied) {
  auto tok = tokenizer::LoadTestTokenizer("deepseek_v3");
  if (!tok) GTEST_SKIP() << "tokenizer files not fetched";
  DocumentOptions reject;
  reject.utf8 = ParseUtf8Policy("reject").value();
  auto enc = DocumentEncoder::Create(tok, reject, "t");
  ASSERT_TRUE(enc.ok());
  std::vector<TokenId> ids;
  Status s = enc->Encode("ab\xFF", &ids);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("byte offset 2"), std::string::npos) << s.ToString();
  EXPECT_FALSE(ParseUtf8Policy("strict").ok());
  EXPECT_NE(ParseUtf8Policy("strict").status().message().find("not 'strict'"), std::string::npos);
}

}  // namespace
}  // namespace tokenfeed::document
