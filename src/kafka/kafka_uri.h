// KafkaUri: the address of one Kafka topic as tokenfeed writes it,
// `kafka://HOST:PORT[,HOST:PORT...]/TOPIC`, split into its bootstrap servers
// and topic. Only the syntax is checked here (ports, topic characters);
// whether the brokers answer is found out when a client connects.
// A plain value; the parser keeps no state.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tokenfeed/status.h"

namespace tokenfeed::kafka {

struct KafkaUri {
  std::vector<std::string> brokers;  // "HOST:PORT" each, in the order given
  std::string topic;

  // "HOST:PORT,HOST:PORT": librdkafka's bootstrap.servers.
  std::string Bootstrap() const;
  std::string ToString() const;
};

inline constexpr std::string_view kKafkaUriScheme = "kafka://";

// True when `text` starts with kafka:// (so the caller should parse it as one).
bool LooksLikeKafkaUri(std::string_view text);
Result<KafkaUri> ParseKafkaUri(std::string_view uri);
// Kafka's rule: 1..249 characters of [A-Za-z0-9._-], and not "." or "..".
Status ValidateTopicName(std::string_view topic);

}  // namespace tokenfeed::kafka
