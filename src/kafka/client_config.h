// ClientConfig: the librdkafka properties a user sets for one Kafka client
// (bootstrap.servers, security.protocol, sasl.*, ssl.*, any tuning key), each
// kept with where it came from (a `-X key=value` flag, a properties file and
// line) so that a property librdkafka rejects is reported with its origin.
// It does not know librdkafka's keys: they are checked when a client is
// created (rdkafka_handle.cc). A plain value; not synchronised.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tokenfeed/status.h"

namespace tokenfeed::kafka {

struct ConfigEntry {
  std::string key;
  std::string value;
  std::string origin;  // "-X", "file.properties:12", "set in code"
};

class ClientConfig {
 public:
  // A later Set of the same key replaces the earlier value (and origin).
  void Set(std::string key, std::string value, std::string origin = "set in code");
  // "key=value", as given to a command-line `-X`; the value may contain '='.
  Status SetAssignment(std::string_view key_equals_value, std::string_view origin = "-X");
  // Java-style properties: `key=value` lines; blank lines and lines starting
  // with '#' or '!' are skipped; spaces around key and value are trimmed.
  Status LoadPropertiesFile(const std::string& path);
  // Applies every entry of `other` over this one, in order.
  void Merge(const ClientConfig& other);

  const ConfigEntry* Find(std::string_view key) const;
  const std::vector<ConfigEntry>& entries() const { return entries_; }

 private:
  std::vector<ConfigEntry> entries_;
};

// True for properties whose values must never appear in messages or logs
// (passwords, secrets, private keys, OAuth configuration).
bool IsSecretProperty(std::string_view key);

}  // namespace tokenfeed::kafka
