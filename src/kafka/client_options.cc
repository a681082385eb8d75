#include "kafka/client_options.h"

namespace tokenfeed::kafka {

Result<ClientOptions> ClientOptionsForUri(std::string_view uri, const std::vector<std::string>& defaults,
                                          const std::string& config_file, const std::vector<std::string>& properties,
                                          std::chrono::milliseconds timeout, KafkaUri* parsed) {
  TF_ASSIGN_OR_RETURN(*parsed, ParseKafkaUri(uri));
  ClientOptions o;
  o.bootstrap = parsed->Bootstrap();
  for (const std::string& p : defaults) TF_RETURN_IF_ERROR(o.config.SetAssignment(p, "the reader's default"));
  if (!config_file.empty()) TF_RETURN_IF_ERROR(o.config.LoadPropertiesFile(config_file));
  for (const std::string& p : properties) TF_RETURN_IF_ERROR(o.config.SetAssignment(p, "-X"));
  if (timeout.count() <= 0) {
    return Status::InvalidArgument("the Kafka timeout must be positive, got " + std::to_string(timeout.count()) +
                                   " ms");
  }
  o.timeout = timeout;
  return o;
}

}  // namespace tokenfeed::kafka
