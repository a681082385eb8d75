// TokenDecoder's steps one by one and chained; every expected string is what
// the reference's decoders (tokenizers 0.23.3) give for the same tokens.
#include "tokenizer/token_decoder.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tokenfeed::tokenizer {
namespace {

using Tokens = std::vector<std::string>;

DecoderStep Replace(std::string_view from, std::string to) {
  DecoderStep s;
  s.kind = DecoderStep::Kind::kReplace;
  s.pattern = MakeLiteralMatcher(from);
  s.content = std::move(to);
  return s;
}

DecoderStep Step(DecoderStep::Kind kind) {
  DecoderStep s;
  s.kind = kind;
  return s;
}

DecoderStep Strip(char32_t c, size_t start, size_t stop) {
  DecoderStep s = Step(DecoderStep::Kind::kStrip);
  s.strip_char = c;
  s.start = start;
  s.stop = stop;
  return s;
}

// Llama-2's decoder: Replace("▁", " "), ByteFallback, Fuse, Strip(" ", 1, 0).
TokenDecoder Llama2() {
  return TokenDecoder({Replace("\xE2\x96\x81", " "), Step(DecoderStep::Kind::kByteFallback),
                       Step(DecoderStep::Kind::kFuse), Strip(U' ', 1, 0)});
}

TEST(TokenDecoderTest, Llama2ChainJoinsWordsAndDropsTheFirstSpace) {
  EXPECT_EQ(Llama2().Decode({"▁Hello", "▁world"}), "Hello world");
  EXPECT_EQ(Llama2().Decode({"▁▁x"}), " x");
  EXPECT_EQ(Llama2().Decode({}), "");
}

TEST(TokenDecoderTest, ByteFallbackJoinsByteRunsThatAreUtf8AndMarksEachByteOfOnesThatAreNot) {
  EXPECT_EQ(Llama2().Decode({"<0xE4>", "<0xB8>", "<0xAD>", "x"}), "中x");
  EXPECT_EQ(Llama2().Decode({"<0xE4>", "<0xB8>", "y", "<0xff>"}), "\xEF\xBF\xBD\xEF\xBF\xBDy\xEF\xBF\xBD");
  // Rust's from_str_radix: either case, a '+' sign; anything else is text.
  EXPECT_EQ(Llama2().Decode({"<0x0a>", "<0x+A>", "<0xZZ>", "<0x41"}), "\n\n<0xZZ><0x41");
  EXPECT_EQ(TokenDecoder({Step(DecoderStep::Kind::kByteFallback)}).Decode({"<0xE4>", "a"}), "\xEF\xBF\xBD" "a");
}

TEST(TokenDecoderTest, StripCutsUpToItsCountsAtEachEndOfEveryToken) {
  EXPECT_EQ(TokenDecoder({Strip(U' ', 2, 3)}).Decode({"   a   ", " b ", "xx"}), " abxx");
  // Where the reference panics (more to strip than the token has), nothing
  // is cut twice.
  EXPECT_EQ(TokenDecoder({Strip(U' ', 2, 3)}).Decode({"  "}), "");
}

TEST(TokenDecoderTest, MetaspaceDropsTheFirstTokensReplacementsUnlessNeverPrepended) {
  DecoderStep always = Step(DecoderStep::Kind::kMetaspace);
  always.strip_char = U'\u2581';
  EXPECT_EQ(TokenDecoder({always}).Decode({"▁▁a▁", "▁b"}), "a b");
  DecoderStep never = always;
  never.prepend_never = true;
  EXPECT_EQ(TokenDecoder({never}).Decode({"▁a", "▁b"}), " a b");
}

TEST(TokenDecoderTest, ReplaceWithARegexReplacesEveryMatch) {
  DecoderStep s = Step(DecoderStep::Kind::kReplace);
  auto m = MakeSplitMatcher("a+", /*fast=*/false);
  ASSERT_TRUE(m.ok());
  s.pattern = std::move(*m);
  s.content = "-";
  EXPECT_EQ(TokenDecoder({s}).Decode({"baaac", "xay"}), "b-cx-y");
}

TEST(TokenDecoderTest, ByteLevelTurnsAlphabetCharactersIntoBytes) {
  EXPECT_EQ(TokenDecoder({Step(DecoderStep::Kind::kByteLevel)}).Decode({"Ġhi", "Ċ"}), " hi\n");
  EXPECT_EQ(ByteLevelTokenBytes("not\xE4\xB8\xAD"), "not\xE4\xB8\xAD");  // outside the alphabet: as it is
}

}  // namespace
}  // namespace tokenfeed::tokenizer
