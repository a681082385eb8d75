// Client statistics: the latest statistics report (librdkafka's JSON, see
// its STATISTICS.md) of each Kafka client of the process, kept so that a
// program can tell what its clients fetched from each broker. Reports come
// only from clients whose properties set `statistics.interval.ms` (0, the
// default, turns them off); tokenfeed does not read them itself. It is not
// the client log (client_log.h), which carries librdkafka's log lines.
//
// The store keeps one report per client name (librdkafka names clients
// uniquely within a process, "rdkafka#consumer-3"), the newest, also after
// the client is closed: a closed client's last report still counts what it
// fetched until that report (up to one interval before it closed). At most
// kMaxClientStatistics clients are kept; past that the one reported least
// recently is dropped and counted.
//
// Threads: reports arrive on the clients' threads; every function here may be
// called from any thread at any time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tokenfeed {

inline constexpr size_t kMaxClientStatistics = 4096;

struct ClientStatistics {
  std::string client;  // the client's name, e.g. "tokenfeed#consumer-3"
  std::string json;    // its latest report, as librdkafka wrote it
};

// Keeps `json` as the latest report of `client`.
void RecordClientStatistics(std::string client, std::string json);

// The latest report of each client kept, in the order they first reported.
std::vector<ClientStatistics> ClientStatisticsSnapshot();

// How many clients' reports were dropped to stay within kMaxClientStatistics.
uint64_t DroppedClientStatistics();

// Forgets every report (and the dropped count): a program measuring one phase
// clears before it.
void ClearClientStatistics();

}  // namespace tokenfeed
