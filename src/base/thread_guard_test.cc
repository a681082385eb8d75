#include "base/thread_guard.h"

#include <gtest/gtest.h>

#include <atomic>
#include <new>
#include <stdexcept>
#include <vector>

namespace tokenfeed {
namespace {

TEST(ThreadGuardTest, WhatABodyThrowsBecomesAStatusNamingTheWork) {
  Status s = RunGuarded("encoding text 7", []() -> Status { throw std::runtime_error("boom"); });
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_EQ(s.message(), "encoding text 7: boom");

  s = RunGuarded("reading", []() -> Status { throw std::bad_alloc(); });
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(), "reading: out of memory");

  s = RunGuarded("x", []() -> Status { throw 42; });
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("unknown exception"), std::string::npos);

  EXPECT_TRUE(RunGuarded("x", [] { return Status::OK(); }).ok());
  EXPECT_EQ(RunGuarded("x", [] { return Status::NotFound("gone"); }).message(), "gone");
}

TEST(ThreadGuardTest, WorkersShareTheQueueAndEveryItemIsDoneOnce) {
  constexpr size_t kItems = 10000;
  std::vector<std::atomic<int>> done(kItems);
  std::atomic<size_t> next{0};
  Status s = RunWorkers(4, "counting", [&](unsigned) {
    for (size_t i; (i = next.fetch_add(1)) < kItems;) done[i].fetch_add(1);
    return Status::OK();
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  for (size_t i = 0; i < kItems; ++i) ASSERT_EQ(done[i].load(), 1) << i;
}

TEST(ThreadGuardTest, AThrowingWorkerIsAnErrorAndTheOthersStillFinish) {
  std::atomic<int> finished{0};
  Status s = RunWorkers(3, "step 5", [&](unsigned w) -> Status {
    if (w == 2) throw std::bad_alloc();
    if (w == 1) throw std::logic_error("worker one");
    finished.fetch_add(1);
    return Status::OK();
  });
  EXPECT_EQ(finished.load(), 1);
  // The lowest-numbered failure is the one reported.
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_EQ(s.message(), "step 5: worker one");
}

TEST(ThreadGuardTest, AReturnedFailureIsReportedAsIs) {
  Status s = RunWorkers(2, "x", [](unsigned w) {
    return w == 0 ? Status::OK() : Status::Corruption("bad batch at offset 9");
  });
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_EQ(s.message(), "bad batch at offset 9");
  EXPECT_TRUE(RunWorkers(0, "x", [](unsigned) { return Status::Internal("never run"); }).ok());
}

}  // namespace
}  // namespace tokenfeed
