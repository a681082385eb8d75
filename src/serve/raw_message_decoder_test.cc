#include "serve/raw_message_decoder.h"

#include <gtest/gtest.h>

namespace tokenfeed::serve {
namespace {

std::span<const std::byte> Bytes(std::string_view s) { return std::as_bytes(std::span<const char>(s)); }

TEST(RawMessageDecoderTest, AutoReadsJsonObjectsAndPlainText) {
  RawMessageDecoder d(RawFormat::kAuto, "text");
  auto json = d.Decode(Bytes(R"(  {"id": 3, "text": "h\u00e9llo \"world\""})"));
  ASSERT_TRUE(json.ok) << json.message;
  EXPECT_EQ(json.text, "h\xc3\xa9llo \"world\"");
  auto plain = d.Decode(Bytes("just some text {not json}"));
  ASSERT_TRUE(plain.ok);
  EXPECT_EQ(plain.text, "just some text {not json}");
  auto array = d.Decode(Bytes(R"(["a json array is text"])"));
  ASSERT_TRUE(array.ok);
  EXPECT_EQ(array.text, R"(["a json array is text"])");
}

TEST(RawMessageDecoderTest, MalformedJsonIsRejectedWithItsReason) {
  RawMessageDecoder d(RawFormat::kAuto, "body.text");
  auto bad = d.Decode(Bytes(R"({"body": {"text": "unterminated)"));
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.reason, text::DropReason::kBadJson);
  EXPECT_FALSE(bad.message.empty());
  auto missing = d.Decode(Bytes(R"({"body": {"other": "x"}})"));
  EXPECT_FALSE(missing.ok);
  EXPECT_EQ(missing.reason, text::DropReason::kMissingField);
  auto number = d.Decode(Bytes(R"({"body": {"text": 42}})"));
  EXPECT_FALSE(number.ok);
  EXPECT_EQ(number.reason, text::DropReason::kNotAString);
  auto nested = d.Decode(Bytes(R"({"body": {"text": "deep"}})"));
  ASSERT_TRUE(nested.ok);
  EXPECT_EQ(nested.text, "deep");
}

TEST(RawMessageDecoderTest, ForcedFormats) {
  RawMessageDecoder text(RawFormat::kText, "text");
  auto t = text.Decode(Bytes(R"({"text": "kept whole"})"));
  ASSERT_TRUE(t.ok);
  EXPECT_EQ(t.text, R"({"text": "kept whole"})");
  RawMessageDecoder json(RawFormat::kJson, "text");
  auto j = json.Decode(Bytes("plain"));
  EXPECT_FALSE(j.ok);
  EXPECT_EQ(j.reason, text::DropReason::kBadJson);
  EXPECT_FALSE(ParseRawFormat("xml").ok());
  EXPECT_EQ(*ParseRawFormat("json"), RawFormat::kJson);
}

TEST(RawMessageDecoderTest, InvalidUtf8IsReplacedBeforeParsing) {
  RawMessageDecoder d(RawFormat::kAuto, "text");
  auto plain = d.Decode(Bytes("bad \xff byte"));
  ASSERT_TRUE(plain.ok);
  EXPECT_TRUE(plain.repaired_utf8);
  EXPECT_EQ(plain.text, "bad \xef\xbf\xbd byte");
  auto json = d.Decode(Bytes("{\"text\": \"in \xc3 json\"}"));
  ASSERT_TRUE(json.ok) << json.message;
  EXPECT_EQ(json.text, "in \xef\xbf\xbd json");
}

}  // namespace
}  // namespace tokenfeed::serve
