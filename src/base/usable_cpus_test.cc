#include "base/usable_cpus.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <thread>

namespace tokenfeed {
namespace {

using usable_cpus_internal::CgroupPath;
using usable_cpus_internal::CpusOfCfsQuota;
using usable_cpus_internal::CpusOfCpuMax;
using usable_cpus_internal::ReadUsableCpuCount;

TEST(UsableCpusTest, CpuMaxQuotaIsRoundedUp) {
  EXPECT_EQ(CpusOfCpuMax("200000 100000\n"), 2u);
  EXPECT_EQ(CpusOfCpuMax("150000 100000\n"), 2u);
  EXPECT_EQ(CpusOfCpuMax("50000 100000"), 1u);
  EXPECT_EQ(CpusOfCpuMax("800000 100000"), 8u);
}

TEST(UsableCpusTest, CpuMaxWithoutALimitOrUnreadableIsNone) {
  EXPECT_EQ(CpusOfCpuMax("max 100000\n"), std::nullopt);
  EXPECT_EQ(CpusOfCpuMax(""), std::nullopt);
  EXPECT_EQ(CpusOfCpuMax("200000"), std::nullopt);
  EXPECT_EQ(CpusOfCpuMax("0 100000"), std::nullopt);
  EXPECT_EQ(CpusOfCpuMax("200000 0"), std::nullopt);
  EXPECT_EQ(CpusOfCpuMax("2e5 100000"), std::nullopt);
}

TEST(UsableCpusTest, CfsQuota) {
  EXPECT_EQ(CpusOfCfsQuota("400000\n", "100000\n"), 4u);
  EXPECT_EQ(CpusOfCfsQuota("250000", "100000"), 3u);
  EXPECT_EQ(CpusOfCfsQuota("-1\n", "100000\n"), std::nullopt);
  EXPECT_EQ(CpusOfCfsQuota("400000", ""), std::nullopt);
}

TEST(UsableCpusTest, CgroupPathsOfBothVersions) {
  const std::string_view v1 = "12:pids:/\n4:cpu,cpuacct:/kubepods/pod1/c2\n3:cpuset:/x\n";
  EXPECT_EQ(CgroupPath(v1, "cpu"), "/kubepods/pod1/c2");
  EXPECT_EQ(CgroupPath(v1, "cpuacct"), "/kubepods/pod1/c2");
  EXPECT_EQ(CgroupPath(v1, "memory"), std::nullopt);
  EXPECT_EQ(CgroupPath(v1), std::nullopt);  // no v2 line
  EXPECT_EQ(CgroupPath("0::/user.slice/job-7\n"), "/user.slice/job-7");
  EXPECT_EQ(CgroupPath("0::/"), "/");
  EXPECT_EQ(CgroupPath("0::/../sibling\n"), std::nullopt);  // outside the namespace's root
  // "cpuset" is not "cpu"; a line without a path is skipped.
  EXPECT_EQ(CgroupPath("3:cpuset:/x\n5:cpu:\n", "cpu"), std::nullopt);
}

// The affinity mask counts: a thread allowed one CPU is told one.
TEST(UsableCpusTest, FollowsTheAffinityMask) {
  cpu_set_t all;
  if (sched_getaffinity(0, sizeof(all), &all) != 0) GTEST_SKIP() << "more CPUs than a cpu_set_t holds";
  const unsigned allowed = static_cast<unsigned>(CPU_COUNT(&all));
  const unsigned usable = ReadUsableCpuCount(0);
  EXPECT_GE(usable, 1u);
  EXPECT_LE(usable, allowed);
  int first = -1;
  for (int c = 0; c < CPU_SETSIZE && first < 0; ++c) {
    if (CPU_ISSET(c, &all)) first = c;
  }
  ASSERT_GE(first, 0);
  unsigned seen = 0;
  int set_rc = 0;
  std::thread t([&] {  // the mask is the thread's: set it on a thread of its own
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    set_rc = sched_setaffinity(0, sizeof(one), &one);
    if (set_rc == 0) seen = ReadUsableCpuCount(0);
  });
  t.join();
  if (set_rc != 0) GTEST_SKIP() << "this sandbox does not let a thread narrow its affinity";
  EXPECT_EQ(seen, 1u);
  EXPECT_EQ(UsableCpuCount(), UsableCpuCount());
}

}  // namespace
}  // namespace tokenfeed
