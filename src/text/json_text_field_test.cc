#include "text/json_text_field.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tokenfeed::text {
namespace {

// The parser reads up to 64 bytes past the line; give it a padded copy.
JsonTextField::Outcome ExtractPadded(JsonTextField& field, std::string_view line) {
  static std::string buffer;
  buffer.assign(line);
  buffer.append(64, 'X');  // whatever follows the line must not matter
  return field.Extract(std::string_view(buffer.data(), line.size()));
}

TEST(JsonTextFieldTest, ReadsAndUnescapesTheField) {
  JsonTextField field("text");
  auto out = ExtractPadded(field, R"({"source":"x","text":"a\n\"b\"\u00e9\ud83d\ude00"})");
  ASSERT_TRUE(out.ok) << out.message;
  EXPECT_EQ(out.text, "a\n\"b\"\xC3\xA9\xF0\x9F\x98\x80");
}

TEST(JsonTextFieldTest, DottedPathWalksNestedObjects) {
  JsonTextField field("meta.body.text");
  auto out = ExtractPadded(field, R"({"meta":{"id":3,"body":{"text":"deep"}}})");
  ASSERT_TRUE(out.ok) << out.message;
  EXPECT_EQ(out.text, "deep");
  EXPECT_EQ(field.path(), "meta.body.text");
}

TEST(JsonTextFieldTest, MalformedLinesAreBadJson) {
  JsonTextField field("text");
  for (std::string_view line : std::vector<std::string_view>{
           R"({"text": "abc")",            // no closing brace
           R"({"text": "abc"} trailing)",  // garbage after the object
           R"({"text": "abc",})",          // trailing comma
           R"({"text": "abc", "n": [1,}})",
           R"({"text": "a\qb"})",          // bad escape
           R"({"text": "\ud800"})",        // lone surrogate
           "not json at all",
           "{\"text\": \"a\x01" "b\"}",       // raw control character in a string
           std::string_view("\x00\x01\x02\x03", 4),
       }) {
    auto out = ExtractPadded(field, line);
    EXPECT_FALSE(out.ok) << line;
    EXPECT_EQ(out.reason, DropReason::kBadJson) << line << ": " << out.message;
    EXPECT_NE(out.message.find("not valid JSON"), std::string::npos) << out.message;
  }
}

TEST(JsonTextFieldTest, RootThatIsNotAnObjectIsBadJson) {
  JsonTextField field("text");
  for (std::string_view line : {R"(["text"])", R"("text")", "42", "null"}) {
    auto out = ExtractPadded(field, line);
    EXPECT_FALSE(out.ok);
    EXPECT_EQ(out.reason, DropReason::kBadJson) << line;
    EXPECT_NE(out.message.find("not a JSON object"), std::string::npos) << out.message;
  }
}

TEST(JsonTextFieldTest, MissingFieldNamesIt) {
  JsonTextField field("text");
  auto out = ExtractPadded(field, R"({"body":"x"})");
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.reason, DropReason::kMissingField);
  EXPECT_NE(out.message.find("'text'"), std::string::npos);

  JsonTextField nested("meta.text");
  out = ExtractPadded(nested, R"({"meta":"flat"})");
  EXPECT_EQ(out.reason, DropReason::kMissingField);
  EXPECT_NE(out.message.find("'meta' is a string"), std::string::npos) << out.message;
  out = ExtractPadded(nested, R"({"meta":{"other":1}})");
  EXPECT_EQ(out.reason, DropReason::kMissingField);
  EXPECT_NE(out.message.find("'meta.text' is missing"), std::string::npos) << out.message;
}

TEST(JsonTextFieldTest, NonStringFieldNamesTheType) {
  JsonTextField field("text");
  struct Case {
    std::string_view line, type;
  } cases[] = {
      {R"({"text":12})", "a number"},    {R"({"text":1.5})", "a number"}, {R"({"text":null})", "null"},
      {R"({"text":true})", "a boolean"}, {R"({"text":[]})", "an array"},  {R"({"text":{}})", "an object"},
  };
  for (const Case& c : cases) {
    auto out = ExtractPadded(field, c.line);
    EXPECT_FALSE(out.ok);
    EXPECT_EQ(out.reason, DropReason::kNotAString) << c.line;
    EXPECT_NE(out.message.find(std::string(c.type)), std::string::npos) << out.message;
  }
}

TEST(JsonTextFieldTest, EmbeddedNulIsKeptForTheCleaner) {
  JsonTextField field("text");
  auto out = ExtractPadded(field, R"({"text":"a\u0000b"})");
  ASSERT_TRUE(out.ok);
  EXPECT_EQ(out.text, std::string_view("a\0b", 3));
}

}  // namespace
}  // namespace tokenfeed::text
