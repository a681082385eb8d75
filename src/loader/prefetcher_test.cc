#include "loader/prefetcher.h"

#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

namespace tokenfeed::loader {
namespace {

using namespace std::chrono_literals;

PrefetchItem BatchItem(uint64_t step, uint64_t bytes = 0) {
  PrefetchItem item;
  item.batch.emplace();
  item.batch->step = step;
  item.bytes = bytes;
  item.state = "after " + std::to_string(step);
  return item;
}

// Waits (at most a few seconds) until `done` holds.
template <typename F>
bool Eventually(F done) {
  for (int i = 0; i < 500 && !done(); ++i) std::this_thread::sleep_for(10ms);
  return done();
}

TEST(PrefetcherTest, ItemsComeInOrderAndNeverMoreThanTheCapacityAhead) {
  std::atomic<uint64_t> produced{0};
  Prefetcher prefetcher(3, UINT64_MAX);
  ASSERT_TRUE(prefetcher.Start([&] { return BatchItem(produced++); }).ok());
  ASSERT_TRUE(Eventually([&] { return prefetcher.buffered().items == 3; }));
  std::this_thread::sleep_for(50ms);  // it would have made a fourth by now
  EXPECT_EQ(produced.load(), 3u);
  for (uint64_t step = 0; step < 10; ++step) {
    auto item = prefetcher.Take();
    ASSERT_TRUE(item.ok());
    EXPECT_EQ(item->batch->step, step);
    EXPECT_EQ(item->state, "after " + std::to_string(step));
    EXPECT_LE(produced.load(), step + 1 + 3 + 1);  // the taken, the queued, one in the making
    EXPECT_LE(prefetcher.buffered().items, 3u);
  }
  prefetcher.Stop();
  EXPECT_EQ(prefetcher.buffered().items, 0u);
}

// The budget stops the queue before the capacity does, but never holds
// back the first item, however large.
TEST(PrefetcherTest, TheMemoryBudgetBoundsTheQueue) {
  std::atomic<uint64_t> produced{0};
  Prefetcher prefetcher(10, 250);
  ASSERT_TRUE(prefetcher.Start([&] { return BatchItem(produced++, 100); }).ok());
  ASSERT_TRUE(Eventually([&] { return prefetcher.buffered().items == 3; }));
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(produced.load(), 3u);
  EXPECT_EQ(prefetcher.buffered().bytes, 300u);
  ASSERT_TRUE(prefetcher.Take().ok());
  ASSERT_TRUE(Eventually([&] { return produced.load() == 4; }));
  prefetcher.Stop();

  Prefetcher small(10, 1);
  ASSERT_TRUE(small.Start([] { return BatchItem(0, 1000); }).ok());
  ASSERT_TRUE(Eventually([&] { return small.buffered().items == 1; }));
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(small.buffered().items, 1u);
  EXPECT_EQ(small.buffered().bytes, 1000u);
}

TEST(PrefetcherTest, AnErrorItemIsTheLast) {
  std::atomic<uint64_t> produced{0};
  Prefetcher prefetcher(4, UINT64_MAX);
  ASSERT_TRUE(prefetcher.Start([&] {
                  const uint64_t n = produced++;
                  if (n < 2) return BatchItem(n);
                  PrefetchItem failed;
                  failed.status = Status::Corruption("bad record at offset 7");
                  return failed;
                }).ok());
  EXPECT_TRUE(prefetcher.Take()->batch.has_value());
  EXPECT_TRUE(prefetcher.Take()->batch.has_value());
  auto last = prefetcher.Take();
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->status.code(), StatusCode::kCorruption);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(produced.load(), 3u);
  EXPECT_EQ(prefetcher.buffered().items, 0u);
}

TEST(PrefetcherTest, TheEndItemIsTheLast) {
  std::atomic<uint64_t> produced{0};
  Prefetcher prefetcher(4, UINT64_MAX);
  ASSERT_TRUE(prefetcher.Start([&] {
                  PrefetchItem end;
                  end.ended_source = 1;
                  ++produced;
                  return end;
                }).ok());
  auto end = prefetcher.Take();
  ASSERT_TRUE(end.ok());
  EXPECT_TRUE(end->final());
  EXPECT_EQ(end->ended_source, 1u);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(produced.load(), 1u);
}

// Stop ends a thread that waits for room, drops what was queued, and
// leaves the prefetcher ready to start again (as LoadState does).
TEST(PrefetcherTest, StopsCleanlyAndStartsAgain) {
  std::atomic<uint64_t> produced{0};
  Prefetcher prefetcher(2, UINT64_MAX);
  ASSERT_TRUE(prefetcher.Start([&] { return BatchItem(produced++); }).ok());
  ASSERT_TRUE(Eventually([&] { return prefetcher.buffered().items == 2; }));
  prefetcher.Stop();
  EXPECT_EQ(prefetcher.buffered().items, 0u);
  EXPECT_EQ(prefetcher.buffered().bytes, 0u);
  const uint64_t before = produced.load();
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(produced.load(), before);
  ASSERT_TRUE(prefetcher.Start([&] { return BatchItem(100 + produced++); }).ok());
  auto item = prefetcher.Take();
  ASSERT_TRUE(item.ok());
  EXPECT_GE(item->batch->step, 100u);
  prefetcher.Stop();
  prefetcher.Stop();  // a second Stop does nothing
}

// A slow producer: Stop waits for the step in progress, then ends.
TEST(PrefetcherTest, StopWaitsForTheStepInProgress) {
  std::atomic<bool> in_step{false}, step_done{false};
  {
    Prefetcher prefetcher(2, UINT64_MAX);
    ASSERT_TRUE(prefetcher.Start([&] {
                    in_step = true;
                    std::this_thread::sleep_for(100ms);
                    step_done = true;
                    return BatchItem(0);
                  }).ok());
    ASSERT_TRUE(Eventually([&] { return in_step.load(); }));
  }  // the destructor stops it
  EXPECT_TRUE(step_done.load());
}

}  // namespace
}  // namespace tokenfeed::loader
