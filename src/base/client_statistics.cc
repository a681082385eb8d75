#include "tokenfeed/client_statistics.h"

#include <algorithm>
#include <mutex>
#include <utility>

namespace tokenfeed {
namespace {

struct Entry {
  ClientStatistics stats;
  uint64_t first = 0;  // order of the first report
  uint64_t last = 0;   // order of the latest report
};

// Leaked on purpose: a client thread may still report during static destruction.
struct Store {
  std::mutex mu;
  std::vector<Entry> entries;  // few (one per client); searched linearly
  uint64_t counter = 0;
  uint64_t dropped = 0;
};

Store& TheStore() {
  static Store* s = new Store;
  return *s;
}

}  // namespace

void RecordClientStatistics(std::string client, std::string json) {
  Store& s = TheStore();
  std::lock_guard lock(s.mu);
  const uint64_t now = ++s.counter;
  for (Entry& e : s.entries) {
    if (e.stats.client == client) {
      e.stats.json = std::move(json);
      e.last = now;
      return;
    }
  }
  if (s.entries.size() >= kMaxClientStatistics) {
    auto oldest = std::min_element(s.entries.begin(), s.entries.end(),
                                   [](const Entry& a, const Entry& b) { return a.last < b.last; });
    s.entries.erase(oldest);
    ++s.dropped;
  }
  s.entries.push_back(Entry{ClientStatistics{std::move(client), std::move(json)}, now, now});
}

std::vector<ClientStatistics> ClientStatisticsSnapshot() {
  Store& s = TheStore();
  std::lock_guard lock(s.mu);
  std::vector<ClientStatistics> out;
  out.reserve(s.entries.size());
  for (const Entry& e : s.entries) out.push_back(e.stats);  // entries stay in order of first report
  return out;
}

uint64_t DroppedClientStatistics() {
  Store& s = TheStore();
  std::lock_guard lock(s.mu);
  return s.dropped;
}

void ClearClientStatistics() {
  Store& s = TheStore();
  std::lock_guard lock(s.mu);
  s.entries.clear();
  s.dropped = 0;
}

}  // namespace tokenfeed
