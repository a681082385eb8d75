#include "tokenfeed/client_statistics.h"

#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace tokenfeed {
namespace {

TEST(ClientStatisticsTest, KeepsTheLatestReportOfEachClientInOrderOfFirstReport) {
  ClearClientStatistics();
  RecordClientStatistics("c#consumer-1", R"({"n":1})");
  RecordClientStatistics("c#consumer-2", R"({"n":2})");
  RecordClientStatistics("c#consumer-1", R"({"n":3})");
  auto all = ClientStatisticsSnapshot();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].client, "c#consumer-1");
  EXPECT_EQ(all[0].json, R"({"n":3})");
  EXPECT_EQ(all[1].client, "c#consumer-2");
  EXPECT_EQ(all[1].json, R"({"n":2})");
  EXPECT_EQ(DroppedClientStatistics(), 0u);
  ClearClientStatistics();
  EXPECT_TRUE(ClientStatisticsSnapshot().empty());
}

TEST(ClientStatisticsTest, PastTheLimitTheClientReportedLeastRecentlyIsDroppedAndCounted) {
  ClearClientStatistics();
  for (size_t i = 0; i < kMaxClientStatistics; ++i) RecordClientStatistics("c" + std::to_string(i), "{}");
  RecordClientStatistics("c0", R"({"fresh":true})");  // c0 is now the newest; c1 the oldest
  RecordClientStatistics("extra", "{}");
  auto all = ClientStatisticsSnapshot();
  ASSERT_EQ(all.size(), kMaxClientStatistics);
  EXPECT_EQ(DroppedClientStatistics(), 1u);
  bool has_c0 = false, has_c1 = false, has_extra = false;
  for (const auto& s : all) {
    has_c0 |= s.client == "c0";
    has_c1 |= s.client == "c1";
    has_extra |= s.client == "extra";
  }
  EXPECT_TRUE(has_c0);
  EXPECT_FALSE(has_c1);
  EXPECT_TRUE(has_extra);
  ClearClientStatistics();
  EXPECT_EQ(DroppedClientStatistics(), 0u);
}

TEST(ClientStatisticsTest, ReportsFromManyThreadsAreAllKept) {
  ClearClientStatistics();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 200; ++i) RecordClientStatistics("t" + std::to_string(t), std::to_string(i));
    });
  }
  for (auto& th : threads) th.join();
  auto all = ClientStatisticsSnapshot();
  ASSERT_EQ(all.size(), 4u);
  for (const auto& s : all) EXPECT_EQ(s.json, "199");
  ClearClientStatistics();
}

}  // namespace
}  // namespace tokenfeed
