// ScopedTempDir: a fresh directory under $TMPDIR (or /tmp) for one test,
// removed with everything in it when the object goes away. For tests and
// benchmarks only; it aborts when the directory cannot be made, since a test
// without its directory cannot say anything useful.
// Not thread-safe; one owner.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/file_system.h"

namespace tokenfeed {

class ScopedTempDir {
 public:
  ScopedTempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/tokenfeed-test-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::perror("mkdtemp");
      std::abort();
    }
    path_ = pattern;
  }
  ~ScopedTempDir() { (void)RemoveTree(FileSystem::Posix(), path_); }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string Join(const std::string& name) const { return JoinPath(path_, name); }

 private:
  std::string path_;
};

}  // namespace tokenfeed
