#include "kafka/client_config.h"

#include <cerrno>
#include <fstream>

namespace tokenfeed::kafka {
namespace {

std::string_view Trim(std::string_view s) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// What a malformed `key=value` line is called in an error: its key when one
// can be told (the name before a ':' or a space, as in "sasl.password: x"),
// never the rest, which may be a secret.
std::string DescribeMalformed(std::string_view text) {
  const size_t end = text.find_first_of(": \t");
  if (end == std::string_view::npos || end == 0) {
    std::string out = std::to_string(text.size());
    out.append(" characters long (not shown: they may hold a secret)");
    return out;
  }
  return "for key '" + std::string(text.substr(0, end)) + "' (the value is not shown)";
}

}  // namespace

void ClientConfig::Set(std::string key, std::string value, std::string origin) {
  for (auto& e : entries_) {
    if (e.key == key) {
      e.value = std::move(value);
      e.origin = std::move(origin);
      return;
    }
  }
  entries_.push_back({std::move(key), std::move(value), std::move(origin)});
}

Status ClientConfig::SetAssignment(std::string_view key_equals_value, std::string_view origin) {
  const size_t eq = key_equals_value.find('=');
  const std::string_view key = eq == std::string_view::npos ? key_equals_value : Trim(key_equals_value.substr(0, eq));
  if (eq == std::string_view::npos) {
    return Status::InvalidArgument(std::string(origin) + " " + DescribeMalformed(Trim(key_equals_value)) +
                                   ": expected a Kafka client property as key=value, e.g. "
                                   "-X security.protocol=SASL_SSL");
  }
  if (key.empty()) {
    return Status::InvalidArgument(std::string(origin) + ": a property with no key before its '=' (the value is "
                                   "not shown): expected key=value, e.g. -X security.protocol=SASL_SSL");
  }
  Set(std::string(key), std::string(Trim(key_equals_value.substr(eq + 1))), std::string(origin));
  return Status::OK();
}

Status ClientConfig::LoadPropertiesFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::FromErrno(errno, "open Kafka properties file", path);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    const std::string_view text = Trim(line);
    if (text.empty() || text.front() == '#' || text.front() == '!') continue;
    const size_t eq = text.find('=');
    if (eq == std::string_view::npos) {
      return Status::InvalidArgument(path + ":" + std::to_string(line_no) + ": no '=' in the line " +
                                     DescribeMalformed(text) + ": expected 'key=value' (or a '#' comment)");
    }
    if (Trim(text.substr(0, eq)).empty()) {
      return Status::InvalidArgument(path + ":" + std::to_string(line_no) +
                                     ": no key before the '=' (the value is not shown): expected 'key=value' (or "
                                     "a '#' comment)");
    }
    Set(std::string(Trim(text.substr(0, eq))), std::string(Trim(text.substr(eq + 1))),
        path + ":" + std::to_string(line_no));
  }
  if (in.bad()) return Status::FromErrno(errno, "read Kafka properties file", path);
  return Status::OK();
}

void ClientConfig::Merge(const ClientConfig& other) {
  for (const auto& e : other.entries_) Set(e.key, e.value, e.origin);
}

const ConfigEntry* ClientConfig::Find(std::string_view key) const {
  for (const auto& e : entries_) {
    if (e.key == key) return &e;
  }
  return nullptr;
}

bool IsSecretProperty(std::string_view key) {
  for (std::string_view marker : {"password", "secret", "ssl.key.pem", "ssl_key", "sasl.oauthbearer.config",
                                  "sasl.jaas", "ssl.keystore", "token"}) {
    if (key.find(marker) != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace tokenfeed::kafka
