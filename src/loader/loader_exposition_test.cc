#include "loader/loader_exposition.h"

#include <gtest/gtest.h>

namespace tokenfeed::loader {
namespace {

bool Has(const std::string& text, const std::string& line) { return text.find(line) != std::string::npos; }

TEST(LoaderExposition, WritesEveryFamilyWithRankAndSourceLabels) {
  LoaderMetrics m;
  m.batches = 3;
  m.tokens = 96;
  m.wait_seconds_total = 0.75;
  m.wait_count = 3;
  m.wait_buckets.fill(0);
  for (size_t i = 0; i < m.wait_buckets.size(); ++i) {
    // waits of 0.0002, 0.02 and 0.7 seconds
    const double bound = LoaderMetrics::kWaitBucketBounds[i];
    m.wait_buckets[i] = (0.0002 <= bound) + (0.02 <= bound) + (0.7 <= bound);
  }
  m.ready_batches = 2;
  m.ready_capacity = 4;
  m.buffered_bytes = 4096;
  m.records_read = 50;
  m.bytes_read = 5000;
  // Partition 1 twice (two shards of the rank): one series, the furthest behind.
  m.partition_lag = {{"log:/d/a", 0, 7, 0.5}, {"log:/d/a", 1, 0, -1}, {"log:/d/a", 1, 3, -1}};
  m.freshness_p50_seconds = 1.5;
  m.freshness_p99_seconds = 2.25;
  m.epochs_completed = {1, 0};
  m.consumed = {{0, 0, 80, 5}, {0, 1, 10, 1}, {1, 0, 6, 2}};
  const std::string t = LoaderExposition(m, 3, {"log:/d/a", "log:/d/\"b\""});
  EXPECT_TRUE(Has(t, "# TYPE tokenfeed_loader_tokens_total counter\ntokenfeed_loader_tokens_total{rank=\"3\"} 96\n"))
      << t;
  EXPECT_TRUE(Has(t, "tokenfeed_loader_batches_total{rank=\"3\"} 3\n"));
  EXPECT_TRUE(Has(t, "# TYPE tokenfeed_loader_data_wait_seconds histogram\n"));
  EXPECT_TRUE(Has(t, "tokenfeed_loader_data_wait_seconds_bucket{rank=\"3\",le=\"0.0001\"} 0\n"));
  EXPECT_TRUE(Has(t, "tokenfeed_loader_data_wait_seconds_bucket{rank=\"3\",le=\"0.0005\"} 1\n"));
  EXPECT_TRUE(Has(t, "tokenfeed_loader_data_wait_seconds_bucket{rank=\"3\",le=\"0.025\"} 2\n"));
  EXPECT_TRUE(Has(t, "tokenfeed_loader_data_wait_seconds_bucket{rank=\"3\",le=\"1\"} 3\n"));
  EXPECT_TRUE(Has(t, "tokenfeed_loader_data_wait_seconds_bucket{rank=\"3\",le=\"+Inf\"} 3\n"));
  EXPECT_TRUE(Has(t, "tokenfeed_loader_data_wait_seconds_sum{rank=\"3\"} 0.75\n"));
  EXPECT_TRUE(Has(t, "tokenfeed_loader_data_wait_seconds_count{rank=\"3\"} 3\n"));
  EXPECT_TRUE(Has(t, "tokenfeed_loader_prefetch_ready_batches{rank=\"3\"} 2\n"));
  EXPECT_TRUE(Has(t, "tokenfeed_loader_prefetch_capacity_batches{rank=\"3\"} 4\n"));
  EXPECT_TRUE(Has(t, "tokenfeed_loader_buffered_bytes{rank=\"3\"} 4096\n"));
  EXPECT_TRUE(Has(t, "tokenfeed_loader_read_records_total{rank=\"3\"} 50\n"));
  EXPECT_TRUE(Has(t, "tokenfeed_loader_read_bytes_total{rank=\"3\"} 5000\n"));
  EXPECT_TRUE(Has(t, "tokenfeed_loader_partition_lag_records{rank=\"3\",source=\"log:/d/a\",partition=\"0\"} 7\n"));
  EXPECT_TRUE(Has(t, "tokenfeed_loader_partition_lag_records{rank=\"3\",source=\"log:/d/a\",partition=\"1\"} 3\n"));
  EXPECT_FALSE(Has(t, "partition=\"1\"} 0\n"));
  EXPECT_TRUE(
      Has(t, "tokenfeed_loader_partition_freshness_seconds{rank=\"3\",source=\"log:/d/a\",partition=\"0\"} 0.5\n"));
  EXPECT_FALSE(Has(t, "tokenfeed_loader_partition_freshness_seconds{rank=\"3\",source=\"log:/d/a\","
                      "partition=\"1\"}"));
  EXPECT_TRUE(Has(t, "tokenfeed_loader_freshness_seconds{rank=\"3\",quantile=\"0.5\"} 1.5\n"));
  EXPECT_TRUE(Has(t, "tokenfeed_loader_freshness_seconds{rank=\"3\",quantile=\"0.99\"} 2.25\n"));
  EXPECT_TRUE(Has(t, "tokenfeed_loader_waiting_for_appends{rank=\"3\"} 0\n"));
  EXPECT_TRUE(Has(t, "tokenfeed_loader_epochs_completed{rank=\"3\",source=\"log:/d/\\\"b\\\"\"} 0\n"));
  EXPECT_TRUE(Has(t, "tokenfeed_loader_source_tokens_total{rank=\"3\",source=\"log:/d/a\",epoch=\"0\"} 80\n"));
  EXPECT_TRUE(Has(t, "tokenfeed_loader_source_tokens_total{rank=\"3\",source=\"log:/d/a\",epoch=\"1\"} 10\n"));
  EXPECT_TRUE(
      Has(t, "tokenfeed_loader_source_documents_total{rank=\"3\",source=\"log:/d/\\\"b\\\"\",epoch=\"0\"} 2\n"));
  // Every sample belongs to a family declared before it, each declared once.
  std::string family;
  size_t at = 0;
  int types = 0;
  while (at < t.size()) {
    const size_t end = t.find('\n', at);
    ASSERT_NE(end, std::string::npos);
    const std::string line = t.substr(at, end - at);
    at = end + 1;
    if (line.starts_with("# TYPE ")) {
      family = line.substr(7, line.find(' ', 7) - 7);
      ++types;
      continue;
    }
    if (line.starts_with("#")) continue;
    EXPECT_TRUE(line.starts_with(family)) << line << " after family " << family;
  }
  EXPECT_EQ(types, 16);
}

}  // namespace
}  // namespace tokenfeed::loader
