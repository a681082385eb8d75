// Command-line options shared by the commands that open topics: Kafka client
// properties (-X key=value, --kafka-config FILE) and the Kafka topic settings.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "tokenfeed/topic.h"

namespace tokenfeed::cli {

struct KafkaCliOptions {
  std::vector<std::string> properties;  // key=value
  std::string config_file;
  int replication_factor = 1;
  std::string compression = "lz4";
  int timeout_ms = 30000;
};

void AddKafkaOptions(CLI::App* cmd, KafkaCliOptions* options, bool writing = true);

// Fills config's Kafka fields; InvalidArgument naming a malformed property.
Status ApplyKafkaOptions(const KafkaCliOptions& options, topic::TopicConfig* config);
Status ApplyKafkaOptions(const KafkaCliOptions& options, topic::WriterConfig* config);

}  // namespace tokenfeed::cli
