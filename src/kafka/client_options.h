// ClientOptions: what every tokenfeed Kafka client (producer, consumers,
// admin) is opened with: the bootstrap servers, the user's librdkafka
// properties (applied over tokenfeed's defaults), and the time bound on any
// one blocking step (connecting, a metadata or admin request, a delivery).
// A plain value; copy it freely.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "kafka/client_config.h"
#include "kafka/kafka_uri.h"
#include "tokenfeed/status.h"

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

// The client options for the cluster of a kafka:// URI, built the same way
// for every command so that -X and --kafka-config mean the same everywhere:
// the URI's bootstrap servers, then `defaults` (a caller's tuning, "key=value"
// each), then the properties file `config_file` (when not empty), then
// `properties` ("key=value" each, as -X gives them); later ones win.
// InvalidArgument for a malformed URI or property, a non-positive timeout.
// Fills *parsed with the URI's parts.
Result<ClientOptions> ClientOptionsForUri(std::string_view uri, const std::vector<std::string>& defaults,
                                          const std::string& config_file, const std::vector<std::string>& properties,
                                          std::chrono::milliseconds timeout, KafkaUri* parsed);

}  // namespace tokenfeed::kafka
