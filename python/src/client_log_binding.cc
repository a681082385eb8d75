// The Kafka client library's log lines for Python: a sink (installed when the
// module loads) keeps them in a bounded queue, because they arrive on
// librdkafka's threads, where calling into Python could deadlock with a thread
// that holds the GIL while it waits for the client. tokenfeed/_client_log.py
// takes them out after each call that may have used a client and hands them
// to the logging module.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tokenfeed/client_log.h"

namespace nb = nanobind;

namespace tokenfeed::python {
namespace {

constexpr size_t kMaxWaitingLines = 10000;

// Leaked on purpose: a client thread may log while the interpreter shuts down.
struct WaitingLines {
  std::mutex mu;
  std::deque<ClientLogLine> lines;
  uint64_t dropped = 0;
  std::atomic<bool> pending{false};
};

WaitingLines& Waiting() {
  static WaitingLines* w = new WaitingLines;
  return *w;
}

void Keep(const ClientLogLine& line) {
  WaitingLines& w = Waiting();
  std::lock_guard lock(w.mu);
  if (w.lines.size() == kMaxWaitingLines) {  // the oldest go first
    w.lines.pop_front();
    ++w.dropped;
  }
  w.lines.push_back(line);
  w.pending.store(true, std::memory_order_release);
}

using PyLine = std::tuple<int, std::string, std::string, std::string>;

// None when nothing waits (the common case, one atomic load); otherwise
// (lines, dropped) with each line (severity, facility, client, message).
nb::object Take() {
  WaitingLines& w = Waiting();
  if (!w.pending.load(std::memory_order_acquire)) return nb::none();
  std::deque<ClientLogLine> lines;
  uint64_t dropped = 0;
  {
    std::lock_guard lock(w.mu);
    lines.swap(w.lines);
    dropped = std::exchange(w.dropped, 0);
    w.pending.store(false, std::memory_order_relaxed);
  }
  std::vector<PyLine> out;
  out.reserve(lines.size());
  for (auto& l : lines) out.emplace_back(l.severity, std::move(l.facility), std::move(l.client), std::move(l.message));
  return nb::make_tuple(nb::cast(std::move(out)), dropped);
}

}  // namespace

void RegisterClientLog(nb::module_& m) {
  SetClientLogSink(Keep);
  m.attr("_client_log_capacity") = kMaxWaitingLines;
  m.def("_take_client_log", &Take,
        "The Kafka client log lines since the last call: None, or (lines, dropped) with each line "
        "(severity, facility, client, message). Private: tokenfeed._client_log forwards them to logging.");
}

}  // namespace tokenfeed::python
