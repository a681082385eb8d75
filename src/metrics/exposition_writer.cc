#include "metrics/exposition_writer.h"

#include <cmath>
#include <cstdint>
#include <cstdio>

namespace tokenfeed::metrics {

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '\\' || c == '"') out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

void ExpositionWriter::Family(std::string_view name, std::string_view type, std::string_view help) {
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  out_ += help;
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += type;
  out_ += '\n';
}

void ExpositionWriter::Sample(std::string_view name, std::initializer_list<Label> labels, double value) {
  out_ += name;
  if (labels.size() > 0) {
    out_ += '{';
    bool first = true;
    for (const auto& [key, val] : labels) {
      if (!first) out_ += ',';
      first = false;
      out_ += key;
      out_ += "=\"";
      out_ += EscapeLabelValue(val);
      out_ += '"';
    }
    out_ += '}';
  }
  char buf[64];
  if (std::isnan(value)) {
    std::snprintf(buf, sizeof buf, " NaN\n");
  } else if (std::isinf(value)) {
    std::snprintf(buf, sizeof buf, value > 0 ? " +Inf\n" : " -Inf\n");
  } else if (std::fabs(value) < 9.007199254740992e15 && value == std::trunc(value)) {
    std::snprintf(buf, sizeof buf, " %lld\n", static_cast<long long>(value));
  } else {
    std::snprintf(buf, sizeof buf, " %.9g\n", value);
  }
  out_ += buf;
}

}  // namespace tokenfeed::metrics
