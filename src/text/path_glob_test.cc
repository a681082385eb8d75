#include "text/path_glob.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "text/text_test_files.h"

namespace tokenfeed::text {
namespace {

TEST(PathGlobTest, ComponentWildcards) {
  EXPECT_TRUE(MatchGlobComponent("*.jsonl", "a.jsonl"));
  EXPECT_TRUE(MatchGlobComponent("*.jsonl", ".jsonl.jsonl") == false);  // leading dot needs a literal dot
  EXPECT_TRUE(MatchGlobComponent(".*", ".hidden"));
  EXPECT_FALSE(MatchGlobComponent("*.jsonl", "a.jsonl.gz"));
  EXPECT_TRUE(MatchGlobComponent("*.jsonl*", "a.jsonl.gz"));
  EXPECT_TRUE(MatchGlobComponent("part-??.txt", "part-07.txt"));
  EXPECT_FALSE(MatchGlobComponent("part-??.txt", "part-7.txt"));
  EXPECT_TRUE(MatchGlobComponent("?", "\xC3\xA9"));  // one character, two bytes
  EXPECT_TRUE(MatchGlobComponent("a*b*c", "aXXbYYbZc"));
  EXPECT_FALSE(MatchGlobComponent("a*b*c", "aXXbYYbZ"));
  EXPECT_TRUE(MatchGlobComponent("*", "anything"));
  EXPECT_TRUE(MatchGlobComponent("[x]", "[x]"));  // no character sets: brackets are literal
}

TEST(PathGlobTest, DoubleStarSpansDirectories) {
  EXPECT_TRUE(MatchGlobPath("data/**/*.jsonl", "data/a.jsonl"));
  EXPECT_TRUE(MatchGlobPath("data/**/*.jsonl", "data/x/y/a.jsonl"));
  EXPECT_FALSE(MatchGlobPath("data/**/*.jsonl", "data/x/.git/a.jsonl"));
  EXPECT_FALSE(MatchGlobPath("data/*/*.jsonl", "data/a.jsonl"));
  EXPECT_TRUE(MatchGlobPath("data/*/*.jsonl", "data/x/a.jsonl"));
  EXPECT_FALSE(MatchGlobPath("data/*.jsonl", "data/x/a.jsonl"));  // * stays inside one component
  EXPECT_TRUE(MatchGlobPath("**", "a/b/c"));
}

TEST(PathGlobTest, ExpandFindsFilesOnly) {
  testing::TempDir dir;
  dir.Write("d/a.jsonl", "");
  dir.Write("d/b.jsonl", "");
  dir.Write("d/c.txt", "");
  dir.Write("d/sub/e.jsonl", "");
  dir.Write("d/sub/deeper/f.jsonl", "");
  dir.Write("d/.hidden/g.jsonl", "");
  dir.Write("d/dir.jsonl/h.txt", "");  // a directory matching *.jsonl is not a match
  auto rel = [&](std::vector<std::string> v) {
    for (auto& p : v) p = p.substr(dir.path().size() + 1);
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
  };
  auto one = ExpandGlob(dir.path() + "/d/*.jsonl");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(rel(*one), (std::vector<std::string>{"d/a.jsonl", "d/b.jsonl"}));
  auto all = ExpandGlob(dir.path() + "/d/**/*.jsonl");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(rel(*all), (std::vector<std::string>{"d/a.jsonl", "d/b.jsonl", "d/sub/deeper/f.jsonl", "d/sub/e.jsonl"}));
  auto mid = ExpandGlob(dir.path() + "/*/sub/*.jsonl");
  ASSERT_TRUE(mid.ok());
  EXPECT_EQ(rel(*mid), (std::vector<std::string>{"d/sub/e.jsonl"}));
  // A trailing ** is every file below, at any depth (hidden ones excepted).
  auto below = ExpandGlob(dir.path() + "/d/**");
  ASSERT_TRUE(below.ok());
  EXPECT_EQ(rel(*below), (std::vector<std::string>{"d/a.jsonl", "d/b.jsonl", "d/c.txt", "d/dir.jsonl/h.txt",
                                                   "d/sub/deeper/f.jsonl", "d/sub/e.jsonl"}));
  auto none = ExpandGlob(dir.path() + "/nowhere/*.jsonl");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

}  // namespace
}  // namespace tokenfeed::text
