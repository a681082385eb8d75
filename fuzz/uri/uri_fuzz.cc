// Fuzzes the URI parsers on arbitrary text: kafka:// (kafka/kafka_uri.h),
// log: (tokenfeed/log.h) and the topic layer's dispatch on them
// (topic::KindOf, topic::HintsFor). Each returns a value or an error with a
// message; a URI that parses survives printing and parsing again with the
// same parts, and KindOf names the transport of the parser that accepted it
// (KindOf looks at the scheme only, so it may accept what a parser then
// refuses). Aborts on a finding.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "kafka/kafka_uri.h"
#include "log/log.h"
#include "tokenfeed/topic.h"

namespace {

[[noreturn]] void Finding(const std::string& what, std::string_view uri) {
  std::fprintf(stderr, "uri_fuzz: %s for '%.*s'\n", what.c_str(), static_cast<int>(uri.size()), uri.data());
  std::abort();
}

template <typename R>
bool Answered(const R& r, std::string_view uri) {
  if (!r.ok() && r.status().message().empty()) Finding("an error without a message", uri);
  return r.ok();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace kf = tokenfeed::kafka;
  namespace lg = tokenfeed::log;
  namespace tp = tokenfeed::topic;
  const std::string_view uri(reinterpret_cast<const char*>(data), size);

  auto kafka = kf::ParseKafkaUri(uri);
  if (Answered(kafka, uri)) {
    auto again = kf::ParseKafkaUri(kafka->ToString());
    if (!again.ok() || again->brokers != kafka->brokers || again->topic != kafka->topic) {
      Finding("a parsed kafka:// URI does not parse again to the same parts", uri);
    }
  }
  auto log = lg::ParseLogUri(uri);
  if (Answered(log, uri)) {
    auto again = lg::ParseLogUri(log->ToString());
    if (!again.ok() || again->path() != log->path() || again->topic != log->topic) {
      Finding("a parsed log: URI (path '" + log->path() + "') parses again " +
                  (again.ok() ? "to the path '" + again->path() + "'" : "to " + again.status().ToString()),
              uri);
    }
  }
  if (kafka.ok() && log.ok()) Finding("both a kafka:// and a log: URI", uri);

  auto kind = tp::KindOf(uri);
  Answered(kind, uri);
  if (kafka.ok() && !(kind.ok() && *kind == tp::TopicKind::kKafka)) Finding("KindOf misnames a kafka:// URI", uri);
  if (log.ok() && !(kind.ok() && *kind == tp::TopicKind::kLog)) Finding("KindOf misnames a log: URI", uri);
  auto hints = tp::HintsFor(uri);
  if (Answered(hints, uri) != kind.ok()) Finding("HintsFor and KindOf disagree", uri);
  return 0;
}
