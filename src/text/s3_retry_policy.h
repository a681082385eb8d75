// S3RetryPolicy: how often and after how long a failed S3 request is tried
// again. A request the client calls retryable (a connection refused or
// reset, a timeout, a 5xx, throttling) is retried up to kMaxRetries times,
// after kBaseDelayMs doubled each time and capped at kMaxDelayMs; one that is
// not (no such key, access denied) fails at once. So a dead endpoint fails
// within about 3 s of waiting plus the requests' own timeouts, never hangs.
// Pure and header-only (the Arrow plugin adapts it to Arrow's
// S3RetryStrategy); any thread.
#pragma once

#include <algorithm>
#include <cstdint>

namespace tokenfeed::text {

struct S3RetryPolicy {
  static constexpr int64_t kMaxRetries = 4;  // 5 attempts in all
  static constexpr int64_t kBaseDelayMs = 200;
  static constexpr int64_t kMaxDelayMs = 1600;

  static bool ShouldRetry(bool retryable, int64_t attempted_retries) {
    return retryable && attempted_retries < kMaxRetries;
  }
  // The wait before retry number `attempted_retries` + 1.
  static int64_t DelayMs(int64_t attempted_retries) {
    const int64_t shift = std::clamp<int64_t>(attempted_retries, 0, 16);
    return std::min<int64_t>(kBaseDelayMs << shift, kMaxDelayMs);
  }
};

}  // namespace tokenfeed::text
