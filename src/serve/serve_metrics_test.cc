#include "serve/serve_metrics.h"

#include <gtest/gtest.h>

namespace tokenfeed::serve {
namespace {

TEST(ServeMetricsTest, CountsOnlyCommittedWorkAndRendersPrometheusText) {
  ServeMetrics m("raw");
  TransactionCounts c;
  c.messages = 10;
  c.records = 8;
  c.tokens = 800;
  c.rejected[static_cast<size_t>(text::DropReason::kBadJson)] = 2;
  m.AddCommitted(c);
  m.AddAborted(5);
  m.AddProducerReopened();
  m.AddProducerReopened();
  m.SetLag({{0, 7}, {1, 3}, {2, -1}});
  const std::string out = m.RenderPrometheus();
  EXPECT_NE(out.find("# TYPE tokenfeed_serve_messages_total counter\n"), std::string::npos) << out;
  EXPECT_NE(out.find("tokenfeed_serve_messages_total{topic=\"raw\"} 10\n"), std::string::npos) << out;
  EXPECT_NE(out.find("tokenfeed_serve_records_total 8\n"), std::string::npos);
  EXPECT_NE(out.find("tokenfeed_serve_rejected_total{reason=\"bad_json\"} 2\n"), std::string::npos);
  EXPECT_NE(out.find("tokenfeed_serve_rejected_total{reason=\"empty\"} 0\n"), std::string::npos);
  EXPECT_NE(out.find("tokenfeed_serve_transactions_total{outcome=\"aborted\"} 1\n"), std::string::npos);
  EXPECT_NE(out.find("# TYPE tokenfeed_serve_producer_reopens_total counter\n"), std::string::npos) << out;
  EXPECT_NE(out.find("tokenfeed_serve_producer_reopens_total 2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("tokenfeed_serve_consumer_lag{topic=\"raw\",partition=\"0\"} 7\n"), std::string::npos);
  EXPECT_EQ(out.find("partition=\"2\""), std::string::npos) << "an unknown lag is not a sample";
  EXPECT_NE(out.find("tokenfeed_serve_consumer_lag_sum 10\n"), std::string::npos);
  EXPECT_NE(out.find("tokenfeed_serve_assigned_partitions 3\n"), std::string::npos);
  EXPECT_EQ(m.messages(), 10u);
  EXPECT_NE(m.Summary().find("10 messages"), std::string::npos) << m.Summary();
}

TEST(ServeMetricsTest, RateIsOverTheRecentSamples) {
  ServeMetrics m("raw");
  const auto t0 = std::chrono::steady_clock::now();
  m.Tick(t0);
  TransactionCounts c;
  c.messages = 500;
  m.AddCommitted(c);
  m.Tick(t0 + std::chrono::seconds(2));
  EXPECT_NE(m.RenderPrometheus().find("tokenfeed_serve_documents_per_second 250\n"), std::string::npos)
      << m.RenderPrometheus();
}

}  // namespace
}  // namespace tokenfeed::serve
