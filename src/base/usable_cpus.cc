#include "base/usable_cpus.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

namespace tokenfeed {
namespace usable_cpus_internal {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

std::optional<int64_t> ParseInt(std::string_view s) {
  s = Trim(s);
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

// ceil(quota / period), for positive numbers; at least 1.
std::optional<unsigned> CpusOf(std::optional<int64_t> quota, std::optional<int64_t> period) {
  if (!quota || !period || *quota <= 0 || *period <= 0) return std::nullopt;
  const int64_t cpus = *quota / *period + (*quota % *period != 0 ? 1 : 0);
  return static_cast<unsigned>(std::clamp<int64_t>(cpus, 1, INT32_MAX));
}

// A small file's contents, or nullopt when it cannot be read.
std::optional<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string text;
  text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad()) return std::nullopt;
  return text;
}

void Lower(std::optional<unsigned>* limit, std::optional<unsigned> found) {
  if (found && (!*limit || *found < **limit)) *limit = found;
}

// `dir` and each directory above it, down to `root` (which is included).
template <typename Visit>
void ForEachAncestor(std::string dir, const std::string& root, Visit&& visit) {
  while (true) {
    visit(dir);
    if (dir.size() <= root.size()) return;
    const size_t slash = dir.find_last_of('/');
    if (slash == std::string::npos || slash < root.size()) {
      dir = root;
    } else {
      dir.resize(slash);
    }
  }
}

std::string Under(const std::string& mount, std::string_view path) {
  std::string dir = mount;
  if (path != "/") dir.append(path);
  return dir;
}

// The lowest CPU quota set on the process's cgroup or its ancestors.
std::optional<unsigned> CgroupCpuLimit() {
  const std::optional<std::string> self = ReadSmallFile("/proc/self/cgroup");
  if (!self) return std::nullopt;
  std::optional<unsigned> limit;
  if (const auto v2 = CgroupPath(*self)) {
    const std::string mount = "/sys/fs/cgroup";
    ForEachAncestor(Under(mount, *v2), mount, [&](const std::string& dir) {
      if (const auto text = ReadSmallFile(dir + "/cpu.max")) Lower(&limit, CpusOfCpuMax(*text));
    });
  }
  if (const auto v1 = CgroupPath(*self, "cpu")) {
    // Without a cgroup namespace the container's own cgroup may be mounted
    // at the hierarchy's root, so the root is read as well.
    for (const std::string mount : {"/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpu"}) {
      ForEachAncestor(Under(mount, *v1), mount, [&](const std::string& dir) {
        const auto quota = ReadSmallFile(dir + "/cpu.cfs_quota_us");
        const auto period = ReadSmallFile(dir + "/cpu.cfs_period_us");
        if (quota && period) Lower(&limit, CpusOfCfsQuota(*quota, *period));
      });
    }
  }
  return limit;
}

// The CPUs of `thread`'s affinity mask; nullopt if unreadable.
std::optional<unsigned> AffinityCpuCount(pid_t thread) {
  for (int cpus = 1024; cpus <= (1 << 16); cpus *= 4) {
    cpu_set_t* set = CPU_ALLOC(cpus);
    if (set == nullptr) return std::nullopt;
    const size_t bytes = CPU_ALLOC_SIZE(cpus);
    CPU_ZERO_S(bytes, set);
    const int rc = sched_getaffinity(thread, bytes, set);
    const int error = errno;
    const int count = rc == 0 ? CPU_COUNT_S(bytes, set) : 0;
    CPU_FREE(set);
    if (rc == 0) return count > 0 ? std::optional<unsigned>(static_cast<unsigned>(count)) : std::nullopt;
    if (error != EINVAL) return std::nullopt;  // EINVAL: the mask is larger than the set
  }
  return std::nullopt;
}

}  // namespace

std::optional<unsigned> CpusOfCpuMax(std::string_view text) {
  text = Trim(text);
  const size_t space = text.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  return CpusOf(ParseInt(text.substr(0, space)), ParseInt(text.substr(space + 1)));
}

std::optional<unsigned> CpusOfCfsQuota(std::string_view quota, std::string_view period) {
  return CpusOf(ParseInt(quota), ParseInt(period));
}

std::optional<std::string_view> CgroupPath(std::string_view proc_self_cgroup, std::string_view v1_controller) {
  std::string_view rest = proc_self_cgroup;
  while (!rest.empty()) {
    const size_t eol = rest.find('\n');
    const std::string_view line = rest.substr(0, eol);
    rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
    // hierarchy-id:controller-list:path
    const size_t a = line.find(':');
    if (a == std::string_view::npos) continue;
    const size_t b = line.find(':', a + 1);
    if (b == std::string_view::npos) continue;
    const std::string_view id = line.substr(0, a), controllers = line.substr(a + 1, b - a - 1);
    const std::string_view path = line.substr(b + 1);
    // A path outside the cgroup namespace's root ("/../x") names no
    // directory under the mount: no limit is read from it.
    if (path.empty() || path.front() != '/' || path.find("/..") != std::string_view::npos) continue;
    if (v1_controller.empty()) {
      if (id == "0" && controllers.empty()) return path;
      continue;
    }
    std::string_view list = controllers;
    while (!list.empty()) {
      const size_t comma = list.find(',');
      if (list.substr(0, comma) == v1_controller) return path;
      list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    }
  }
  return std::nullopt;
}

unsigned ReadUsableCpuCount(pid_t thread) {
  unsigned cpus = AffinityCpuCount(thread).value_or(std::max(1u, std::thread::hardware_concurrency()));
  if (const auto quota = CgroupCpuLimit()) cpus = std::min(cpus, *quota);
  return std::max(1u, cpus);
}

}  // namespace usable_cpus_internal

unsigned UsableCpuCount() {
  static const unsigned cpus = usable_cpus_internal::ReadUsableCpuCount(getpid());
  return cpus;
}

}  // namespace tokenfeed
