#include "text/s3_uri.h"

#include <gtest/gtest.h>

#include "text/path_glob.h"

namespace tokenfeed::text {
namespace {

TEST(S3UriTest, RecognisesTheScheme) {
  EXPECT_TRUE(IsS3Uri("s3://bucket/key"));
  EXPECT_TRUE(IsS3Uri("s3://"));
  EXPECT_FALSE(IsS3Uri("S3://bucket/key"));
  EXPECT_FALSE(IsS3Uri("/data/s3://x"));
  EXPECT_FALSE(IsS3Uri("gs://bucket/key"));
}

TEST(S3UriTest, ParsesBucketAndKey) {
  auto u = ParseS3Uri("s3://corpus-1/crawl/2024/part-0.jsonl.gz");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->bucket, "corpus-1");
  EXPECT_EQ(u->key, "crawl/2024/part-0.jsonl.gz");
  EXPECT_EQ(u->ToString(), "s3://corpus-1/crawl/2024/part-0.jsonl.gz");

  // A prefix reads like a directory with or without its trailing slash.
  auto prefix = ParseS3Uri("s3://corpus-1/crawl/");
  ASSERT_TRUE(prefix.ok());
  EXPECT_EQ(prefix->key, "crawl");
  EXPECT_EQ(prefix->Child("crawl/a.txt"), "s3://corpus-1/crawl/a.txt");

  for (const char* whole : {"s3://corpus-1", "s3://corpus-1/"}) {
    auto bucket = ParseS3Uri(whole);
    ASSERT_TRUE(bucket.ok()) << whole;
    EXPECT_EQ(bucket->key, "");
    EXPECT_EQ(bucket->ToString(), "s3://corpus-1");
  }
  // Wildcards are kept for the glob.
  auto glob = ParseS3Uri("s3://b.example/dir/*.jsonl?");
  ASSERT_TRUE(glob.ok());
  EXPECT_EQ(glob->key, "dir/*.jsonl?");
}

TEST(S3UriTest, RefusesWhatNoListingCouldNameBack) {
  for (const char* bad : {"s3://", "s3:///key", "s3://ab/key", "s3://Upper/key", "s3://under_score/k",
                          "s3://-dash/k", "s3://bucket//key", "s3://bucket/a//b", "s3://bucket/a/../b",
                          "s3://bucket/./b", "/local/path"}) {
    auto u = ParseS3Uri(bad);
    ASSERT_FALSE(u.ok()) << bad;
    EXPECT_EQ(u.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(u.status().message().find(std::string("'") + bad + "'"), std::string::npos) << u.status().ToString();
  }
}

TEST(S3UriTest, GlobListingPrefixStopsAtTheFirstWildcard) {
  EXPECT_EQ(GlobListingPrefix("dir/sub/*.jsonl.gz"), "dir/sub");
  EXPECT_EQ(GlobListingPrefix("dir/**/*.jsonl"), "dir");
  EXPECT_EQ(GlobListingPrefix("dir/part-?" "?/x.txt"), "dir");  // split: "??/" would be a trigraph
  EXPECT_EQ(GlobListingPrefix("*.jsonl"), "");
  EXPECT_EQ(GlobListingPrefix("**/a.txt"), "");
}

TEST(S3UriTest, KeysMatchGlobsLikePaths) {
  // Keys below the listing prefix are matched with path_glob's rules.
  EXPECT_TRUE(MatchGlobPath("dir/*.jsonl.gz", "dir/a.jsonl.gz"));
  EXPECT_FALSE(MatchGlobPath("dir/*.jsonl.gz", "dir/sub/a.jsonl.gz"));
  EXPECT_TRUE(MatchGlobPath("dir/**/*.jsonl.gz", "dir/sub/a.jsonl.gz"));
  EXPECT_FALSE(MatchGlobPath("dir/*.jsonl.gz", "dir/.a.jsonl.gz"));
}

TEST(S3UriTest, HiddenBelowThePrefix) {
  EXPECT_FALSE(IsHiddenBelow("dir", "dir/a.txt"));
  EXPECT_TRUE(IsHiddenBelow("dir", "dir/.a.txt"));
  EXPECT_TRUE(IsHiddenBelow("dir", "dir/.git/config"));
  EXPECT_TRUE(IsHiddenBelow("", ".hidden/x"));
  EXPECT_FALSE(IsHiddenBelow("", "visible/x"));
  // A dot in the prefix itself is what the user asked for.
  EXPECT_FALSE(IsHiddenBelow(".cache/data", ".cache/data/a.txt"));
  EXPECT_FALSE(IsHiddenBelow("dir", "dir/sub/a.b.txt"));
}

}  // namespace
}  // namespace tokenfeed::text
