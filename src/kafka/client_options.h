// ClientOptions: what every tokenfeed Kafka client (producer, consumers,
// admin) is opened with: the bootstrap servers, the user's librdkafka
// properties (applied over tokenfeed's defaults), and the time bound on any
// one blocking step (connecting, a metadata or admin request, a delivery).
// A plain value; copy it freely.
#pragma once

#include <chrono>
#include <string>

#include "kafka/client_config.h"

namespace tokenfeed::kafka {

inline constexpr std::chrono::milliseconds kDefaultClientTimeout{30000};

struct ClientOptions {
  // HOST:PORT[,HOST:PORT...]; when empty, bootstrap.servers from `config`.
  std::string bootstrap;
  // Any librdkafka property; these win over tokenfeed's defaults except the
  // few a client refuses (named in its header) because they would break it.
  ClientConfig config;
  // No blocking call waits longer: an unreachable cluster becomes an
  // Unavailable or TimedOut error naming the bootstrap servers, never a hang.
  std::chrono::milliseconds timeout = kDefaultClientTimeout;
  std::string client_id = "tokenfeed";
};

}  // namespace tokenfeed::kafka
