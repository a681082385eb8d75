#include "cli/topic_options.h"

namespace tokenfeed::cli {

void AddKafkaOptions(CLI::App* cmd, KafkaCliOptions* o, bool writing) {
  cmd->add_option("-X", o->properties, "Kafka client property key=value (repeatable; e.g. security.protocol=SSL)");
  cmd->add_option("--kafka-config", o->config_file, "Kafka client properties file (key=value lines, # comments)");
  cmd->add_option("--kafka-timeout-ms", o->timeout_ms, "how long to wait for the Kafka cluster")
      ->capture_default_str();
  if (writing) {
    cmd->add_option("--replication-factor", o->replication_factor, "replicas of a new Kafka topic")
        ->capture_default_str();
    cmd->add_option("--compression", o->compression, "Kafka producer compression")
        ->check(CLI::IsMember({"lz4", "zstd", "snappy", "gzip", "none"}))
        ->capture_default_str();
  }
}

Status ApplyKafkaOptions(const KafkaCliOptions& o, topic::TopicConfig* config) {
  config->kafka_config_file = o.config_file;
  config->kafka_properties = o.properties;
  if (o.timeout_ms <= 0) return Status::InvalidArgument("--kafka-timeout-ms must be positive");
  config->kafka_timeout = std::chrono::milliseconds(o.timeout_ms);
  return Status::OK();
}

Status ApplyKafkaOptions(const KafkaCliOptions& o, topic::WriterConfig* config) {
  TF_RETURN_IF_ERROR(ApplyKafkaOptions(o, static_cast<topic::TopicConfig*>(config)));
  if (o.replication_factor <= 0) return Status::InvalidArgument("--replication-factor must be positive");
  config->replication_factor = o.replication_factor;
  config->compression = o.compression;
  return Status::OK();
}

}  // namespace tokenfeed::cli
