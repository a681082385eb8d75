#include "text/s3_retry_policy.h"

#include <gtest/gtest.h>

namespace tokenfeed::text {
namespace {

TEST(S3RetryPolicyTest, RetriesOnlyRetryableErrorsAndAFewTimes) {
  EXPECT_FALSE(S3RetryPolicy::ShouldRetry(false, 0));  // no such key, access denied: at once
  int64_t retries = 0;
  while (S3RetryPolicy::ShouldRetry(true, retries) && retries < 100) ++retries;
  EXPECT_EQ(retries, S3RetryPolicy::kMaxRetries);
}

TEST(S3RetryPolicyTest, BackoffDoublesAndIsCapped) {
  EXPECT_EQ(S3RetryPolicy::DelayMs(0), 200);
  EXPECT_EQ(S3RetryPolicy::DelayMs(1), 400);
  EXPECT_EQ(S3RetryPolicy::DelayMs(2), 800);
  EXPECT_EQ(S3RetryPolicy::DelayMs(3), 1600);
  EXPECT_EQ(S3RetryPolicy::DelayMs(10), S3RetryPolicy::kMaxDelayMs);
  EXPECT_EQ(S3RetryPolicy::DelayMs(1000), S3RetryPolicy::kMaxDelayMs);  // no overflow
  EXPECT_EQ(S3RetryPolicy::DelayMs(-1), 200);
  int64_t total = 0;
  for (int64_t r = 0; r < S3RetryPolicy::kMaxRetries; ++r) total += S3RetryPolicy::DelayMs(r);
  EXPECT_EQ(total, 3000);  // the whole wait before giving up on a dead endpoint
}

}  // namespace
}  // namespace tokenfeed::text
