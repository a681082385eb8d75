#include "base/utf8.h"

#include <random>
#include <string>

#include <gtest/gtest.h>

namespace tokenfeed {
namespace {

std::string Repair(std::string_view s) {
  std::string out;
  AppendRepairedUtf8(s, &out);
  return out;
}

const std::string kFffd = "\xEF\xBF\xBD";

TEST(Utf8Test, ValidTextIsUnchanged) {
  std::string s = "hello, \xE4\xB8\x96\xE7\x95\x8C \xF0\x9F\x98\x80 \xC2\x85";
  EXPECT_TRUE(IsValidUtf8(s));
  EXPECT_EQ(Repair(s), s);
  EXPECT_EQ(FindInvalidUtf8(s), std::string_view::npos);
}

TEST(Utf8Test, FindsFirstInvalidOffset) {
  EXPECT_EQ(FindInvalidUtf8("abc\xFF" "def"), 3u);
  EXPECT_EQ(FindInvalidUtf8("ab\xE4\xB8"), 2u);        // truncated at the end
  EXPECT_EQ(FindInvalidUtf8("\xED\xA0\x80"), 0u);      // a surrogate
  EXPECT_EQ(FindInvalidUtf8("x\xC0\xAF"), 1u);         // overlong '/'
  EXPECT_EQ(FindInvalidUtf8("xy\xF4\x90\x80\x80"), 2u);  // above U+10FFFF
}

// The expected outputs are those of Python's bytes.decode("utf-8", "replace").
TEST(Utf8Test, MaximalSubpartReplacement) {
  EXPECT_EQ(Repair("a\xFF" "b"), "a" + kFffd + "b");
  EXPECT_EQ(Repair("\xE2\x82"), kFffd);                      // one truncated sequence
  EXPECT_EQ(Repair("\xE2\x82" "A"), kFffd + "A");
  EXPECT_EQ(Repair("\xF0\x80\x80"), kFffd + kFffd + kFffd);  // F0 needs 90..BF next
  EXPECT_EQ(Repair("\xED\xA0\x80"), kFffd + kFffd + kFffd);  // surrogate
  EXPECT_EQ(Repair("\xF0\x9F\x98"), kFffd);                  // truncated emoji
  EXPECT_EQ(Repair("\xC0\xAF"), kFffd + kFffd);
  EXPECT_EQ(Repair("\x80\x80"), kFffd + kFffd);
  EXPECT_EQ(Repair("\xF4\x8F\xBF\xBF"), "\xF4\x8F\xBF\xBF");  // U+10FFFF is valid
  EXPECT_EQ(Repair("\xF8\x88\x80\x80\x80"), kFffd + kFffd + kFffd + kFffd + kFffd);
}

TEST(Utf8Test, RepairedTextIsAlwaysValid) {
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::string s(rng() % 40, '\0');
    for (char& c : s) c = static_cast<char>(rng() % 4 == 0 ? rng() % 256 : 0x80 + rng() % 0x50);
    std::string r = Repair(s);
    ASSERT_TRUE(IsValidUtf8(r)) << "round " << round;
  }
}

TEST(Utf8Test, AppendUtf8EncodesEachLength) {
  std::string s;
  AppendUtf8(U'A', &s);
  AppendUtf8(U'\u00E9', &s);
  AppendUtf8(U'\u4E16', &s);
  AppendUtf8(U'\U0001F600', &s);
  EXPECT_EQ(s, "A\xC3\xA9\xE4\xB8\x96\xF0\x9F\x98\x80");
}

}  // namespace
}  // namespace tokenfeed
