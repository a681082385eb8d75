// ExpositionWriter: text in the Prometheus exposition format (version 0.0.4),
// as a /metrics endpoint answers it: each family's HELP and TYPE lines, then
// its samples, label values escaped. It writes, it does not check: names
// follow the project's conventions (tokenfeed_<component>_<what>_<unit>,
// counters ending in _total; docs/metrics.md). Not the HTTP endpoint
// (metrics_http_server.h). A value, not thread-safe.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace tokenfeed::metrics {

using Label = std::pair<std::string_view, std::string_view>;

class ExpositionWriter {
 public:
  // "# HELP name help" and "# TYPE name type" (counter, gauge, histogram).
  void Family(std::string_view name, std::string_view type, std::string_view help);
  // "name{k="v",...} value": whole numbers without a fraction, others with
  // up to 9 significant digits.
  void Sample(std::string_view name, std::initializer_list<Label> labels, double value);
  void Sample(std::string_view name, double value) { Sample(name, {}, value); }

  const std::string& text() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

// A label value as the format quotes it: backslash, double quote and newline escaped.
std::string EscapeLabelValue(std::string_view value);

}  // namespace tokenfeed::metrics
