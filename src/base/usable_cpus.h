// UsableCpuCount: the CPUs this process may keep busy, the default of every
// "all cores" thread count: the main thread's affinity mask (taskset, Slurm
// and container cpusets) lowered to the cgroup CPU quota (v2 cpu.max, v1 cfs
// quota / period, rounded up, lowest along the ancestors). Unlike
// std::thread::hardware_concurrency(), which counts the host. At least 1.
// Read once, on the first call, then kept; thread-safe.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string_view>

namespace tokenfeed {

unsigned UsableCpuCount();

namespace usable_cpus_internal {

// The same, read now and not kept, from the affinity mask of `thread` (a
// thread id; 0: the calling thread). UsableCpuCount() reads the main
// thread's, so that a pinned thread calling first does not set it for all.
unsigned ReadUsableCpuCount(pid_t thread);

// The CPUs a cgroup v2 `cpu.max` file allows ("200000 100000" -> 2,
// "150000 100000" -> 2), or nullopt for no limit ("max 100000") and for
// text that is not two positive numbers.
std::optional<unsigned> CpusOfCpuMax(std::string_view text);

// The same for cgroup v1's `cpu.cfs_quota_us` and `cpu.cfs_period_us`
// contents; a quota of -1 is no limit.
std::optional<unsigned> CpusOfCfsQuota(std::string_view quota, std::string_view period);

// From /proc/self/cgroup's contents: the cgroup v2 path (the "0::" line) or,
// with `v1_controller` set, the path of the v1 hierarchy whose controller
// list names it ("cpu" matches "4:cpu,cpuacct:/a"). nullopt when absent.
std::optional<std::string_view> CgroupPath(std::string_view proc_self_cgroup, std::string_view v1_controller = {});

}  // namespace usable_cpus_internal
}  // namespace tokenfeed
