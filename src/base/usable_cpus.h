// UsableCpuCount: how many CPUs this process may keep busy at once, the
// default for every "all cores" thread count (tokenize --threads 0, ingest,
// Tokenizer::EncodeBatch, the batch scratches a tokenizer keeps). It is the
// CPUs of the calling thread's affinity mask (taskset, Slurm's and
// containers' cpusets), lowered to the CPU quota of the process's cgroup
// where one is set (cgroup v2 `cpu.max`, v1 `cpu.cfs_quota_us` over
// `cpu.cfs_period_us`, rounded up; the lowest along the cgroup's ancestors).
// std::thread::hardware_concurrency() counts the host's online CPUs and
// ignores both: a pod limited to 8 CPUs on a 128-core host would start 128
// workers, and a tokenizer would keep 128 word caches.
// It is not a scheduler hint or a load measure. Never less than 1.
// UsableCpuCount() reads the system once, on its first call, and keeps the
// answer (later affinity or quota changes are not seen); thread-safe.
#pragma once

#include <optional>
#include <string_view>

namespace tokenfeed {

unsigned UsableCpuCount();

namespace usable_cpus_internal {

// The same, read now and not kept (tests change the thread's affinity).
unsigned ReadUsableCpuCount();

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
