#include "kafka/kafka_uri.h"

#include <charconv>

namespace tokenfeed::kafka {
namespace {

constexpr std::string_view kUriShape = "expected kafka://HOST:PORT[,HOST:PORT...]/TOPIC";

Status Malformed(std::string_view uri, std::string_view why) {
  std::string m = "invalid Kafka URI '";
  m.append(uri).append("': ").append(why).append("; ").append(kUriShape);
  return Status::InvalidArgument(std::move(m));
}

bool ValidHostChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
         c == '_';
}

}  // namespace

std::string KafkaUri::Bootstrap() const {
  std::string s;
  for (const auto& b : brokers) {
    if (!s.empty()) s.push_back(',');
    s.append(b);
  }
  return s;
}

std::string KafkaUri::ToString() const { return std::string(kKafkaUriScheme) + Bootstrap() + "/" + topic; }

bool LooksLikeKafkaUri(std::string_view text) { return text.starts_with(kKafkaUriScheme); }

Status ValidateTopicName(std::string_view topic) {
  if (topic.empty()) return Status::InvalidArgument("empty Kafka topic name");
  if (topic.size() > 249) {
    return Status::InvalidArgument("Kafka topic name of " + std::to_string(topic.size()) +
                                   " characters: at most 249 are allowed");
  }
  if (topic == "." || topic == "..") return Status::InvalidArgument("Kafka topic name cannot be '.' or '..'");
  for (char c : topic) {
    if (!ValidHostChar(c)) {
      return Status::InvalidArgument("Kafka topic name '" + std::string(topic) +
                                     "': only letters, digits, '.', '_' and '-' are allowed");
    }
  }
  return Status::OK();
}

Result<KafkaUri> ParseKafkaUri(std::string_view uri) {
  if (!LooksLikeKafkaUri(uri)) return Malformed(uri, "it does not start with kafka://");
  std::string_view rest = uri.substr(kKafkaUriScheme.size());
  const size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return Malformed(uri, "no /TOPIC after the brokers");
  const std::string_view hosts = rest.substr(0, slash);
  const std::string_view topic = rest.substr(slash + 1);
  if (hosts.empty()) return Malformed(uri, "no broker before the /");
  if (topic.empty()) return Malformed(uri, "no topic after the /");
  if (Status s = ValidateTopicName(topic); !s.ok()) return Malformed(uri, s.message());

  KafkaUri out;
  out.topic = std::string(topic);
  size_t start = 0;
  while (start <= hosts.size()) {
    size_t comma = hosts.find(',', start);
    if (comma == std::string_view::npos) comma = hosts.size();
    const std::string_view hp = hosts.substr(start, comma - start);
    if (hp.empty()) return Malformed(uri, "an empty broker address in the list");
    size_t colon;
    std::string_view host;
    if (hp.front() == '[') {  // [IPv6]:PORT
      const size_t close = hp.find(']');
      if (close == std::string_view::npos || close + 1 >= hp.size() || hp[close + 1] != ':') {
        return Malformed(uri, "broker '" + std::string(hp) + "' is not [IPV6]:PORT");
      }
      host = hp.substr(1, close - 1);
      colon = close + 1;
    } else {
      colon = hp.rfind(':');
      if (colon == std::string_view::npos) return Malformed(uri, "broker '" + std::string(hp) + "' has no :PORT");
      host = hp.substr(0, colon);
      for (char c : host) {
        if (!ValidHostChar(c)) return Malformed(uri, "broker host '" + std::string(host) + "' has a bad character");
      }
    }
    if (host.empty()) return Malformed(uri, "broker '" + std::string(hp) + "' has no host");
    const std::string_view port_text = hp.substr(colon + 1);
    int port = 0;
    const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || end != port_text.data() + port_text.size() || port < 1 || port > 65535) {
      return Malformed(uri, "broker '" + std::string(hp) + "' has port '" + std::string(port_text) +
                                "', not a number in 1..65535");
    }
    out.brokers.emplace_back(hp);
    start = comma + 1;
    if (comma == hosts.size()) break;
  }
  return out;
}

}  // namespace tokenfeed::kafka
