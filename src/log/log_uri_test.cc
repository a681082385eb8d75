#include <gtest/gtest.h>

#include "log/log.h"

namespace tokenfeed::log {
namespace {

TEST(LogUriTest, Parses) {
  auto u = ParseLogUri("log:/data/topics/c4");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->dir, "/data/topics");
  EXPECT_EQ(u->topic, "c4");
  EXPECT_EQ(u->path(), "/data/topics/c4");
  EXPECT_EQ(u->ToString(), "log:/data/topics/c4");
  auto rel = ParseLogUri("log:work/t-1.v2/");
  ASSERT_TRUE(rel.ok());
  EXPECT_EQ(rel->dir, "work");
  EXPECT_EQ(rel->topic, "t-1.v2");
  auto bare = ParseLogUri("log:topic");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->dir, ".");
  EXPECT_EQ(bare->path(), "topic");
}

TEST(LogUriTest, RejectsWithExplanation) {
  for (const char* bad : {"/data/t", "kafka://b/t", "log:", "log:/", "log:/d/.hidden", "log:/d/sp ace", "log:/d/a*b"}) {
    auto u = ParseLogUri(bad);
    ASSERT_FALSE(u.ok()) << bad;
    EXPECT_EQ(u.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(u.status().message().find("log:"), std::string::npos) << u.status().ToString();
  }
}

}  // namespace
}  // namespace tokenfeed::log
