#include "base/thread_guard.h"

#include <exception>
#include <new>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace tokenfeed {

Status StatusOfCurrentException(std::string_view doing) {
  const std::string where = doing.empty() ? std::string() : std::string(doing) + ": ";
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return Status::ResourceExhausted(where + "out of memory");
  } catch (const std::exception& e) {
    return Status::Internal(where + e.what());
  } catch (...) {
    return Status::Internal(where + "an unknown exception");
  }
}

Status RunGuarded(std::string_view doing, const std::function<Status()>& body) noexcept {
  try {
    return body();
  } catch (...) {
    try {
      return StatusOfCurrentException(doing);
    } catch (...) {
      // Out of memory while describing the failure: a Status without a message
      // needs no allocation beyond its own.
      return Status(StatusCode::kResourceExhausted, {});
    }
  }
}

Status RunWorkers(unsigned n, std::string_view doing, const std::function<Status(unsigned)>& work) noexcept {
  if (n == 0) return Status::OK();
  std::vector<Status> results;
  std::vector<std::thread> threads;
  try {
    results.resize(n);
    threads.reserve(n - 1);
  } catch (...) {
    return RunGuarded(doing, [&] { return work(0); });
  }
  for (unsigned w = 1; w < n; ++w) {
    try {
      threads.emplace_back([&, w] { results[w] = RunGuarded(doing, [&] { return work(w); }); });
    } catch (...) {
      break;  // no more threads to be had: the started workers take the rest
    }
  }
  results[0] = RunGuarded(doing, [&] { return work(0); });
  for (auto& t : threads) t.join();
  for (const Status& s : results) {
    if (!s.ok()) return s;
  }
  return Status::OK();
}

}  // namespace tokenfeed
