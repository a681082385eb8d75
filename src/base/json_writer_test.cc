#include "base/json_writer.h"

#include <gtest/gtest.h>

#include <string>

namespace tokenfeed {
namespace {

TEST(JsonWriterTest, ObjectsArraysAndScalars) {
  std::string out;
  JsonWriter j(&out);
  j.BeginObject().Key("a").Uint(7).Key("b").BeginArray().String("x").Bool(true).EndArray().Key("c").Double(1.5);
  j.EndObject();
  EXPECT_EQ(out, R"({"a":7,"b":["x",true],"c":1.500})");
}

TEST(JsonWriterTest, EscapesAndRepairsSoTheOutputIsAlwaysValidJson) {
  std::string out;
  JsonWriter j(&out);
  j.String(std::string("q\"b\\n\nr\rt\t\x01\x7F") + "数据");
  EXPECT_EQ(out, "\"q\\\"b\\\\n\\nr\\rt\\t\\u0001\\u007f数据\"");
  out.clear();
  JsonWriter k(&out);
  k.String("bad \xFF byte");  // invalid UTF-8 (a path, a document's bytes)
  EXPECT_EQ(out, "\"bad \xEF\xBF\xBD byte\"");
}

}  // namespace
}  // namespace tokenfeed
