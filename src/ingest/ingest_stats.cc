#include <cstdio>
#include <string>

#include "ingest/ingest.h"
#include "text/drop_reason.h"

namespace tokenfeed::ingest {
namespace {

void AppendJsonString(std::string_view s, std::string* out) {
  out->push_back('"');
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(c);
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", u);
      out->append(buf);
    } else {
      out->push_back(c);
    }
  }
  out->push_back('"');
}

}  // namespace

std::string IngestStats::ToJson() const {
  std::string j = "{";
  auto num = [&](const char* k, double v, bool integer = true) {
    char buf[64];
    if (integer) {
      std::snprintf(buf, sizeof(buf), "\"%s\":%llu,", k, static_cast<unsigned long long>(v));
    } else {
      std::snprintf(buf, sizeof(buf), "\"%s\":%.3f,", k, v);
    }
    j += buf;
  };
  num("documents_read", static_cast<double>(documents_read));
  num("documents_written", static_cast<double>(documents_written));
  num("documents_skipped_already_in_topic", static_cast<double>(documents_skipped));
  num("documents_dropped", static_cast<double>(cleaning.total_dropped()));
  j += "\"dropped_by_reason\":{";
  bool first = true;
  for (size_t r = 0; r < text::kDropReasonCount; ++r) {
    if (!first) j += ",";
    first = false;
    AppendJsonString(text::DropReasonName(static_cast<text::DropReason>(r)), &j);
    j += ":" + std::to_string(cleaning.dropped[r]);
  }
  j += "},";
  num("tokens_written", static_cast<double>(tokens_written));
  num("text_bytes", static_cast<double>(text_bytes));
  num("record_bytes", static_cast<double>(record_bytes));
  num("files", static_cast<double>(files));
  j += "\"incomplete_files\":[";
  for (size_t i = 0; i < incomplete_files.size(); ++i) {
    if (i) j += ",";
    AppendJsonString(incomplete_files[i], &j);
  }
  j += "],";
  j += std::string("\"resumed\":") + (resumed ? "true" : "false") + ",";
  num("resumed_from_sequence", static_cast<double>(resumed_from_sequence));
  num("seconds", seconds, false);
  j.back() = '}';
  return j;
}

std::string IngestStats::Summary() const {
  char buf[512];
  std::string s;
  std::snprintf(buf, sizeof(buf),
                "ingest: %llu documents read, %llu written, %llu already in the topic, %llu dropped; "
                "%llu tokens; %.1f MB of text -> %.1f MB of records; %.1f s (%.1f MB/s, %.2f M tokens/s)\n",
                static_cast<unsigned long long>(documents_read), static_cast<unsigned long long>(documents_written),
                static_cast<unsigned long long>(documents_skipped),
                static_cast<unsigned long long>(cleaning.total_dropped()),
                static_cast<unsigned long long>(tokens_written), static_cast<double>(text_bytes) / 1e6,
                static_cast<double>(record_bytes) / 1e6, seconds,
                seconds > 0 ? static_cast<double>(text_bytes) / 1e6 / seconds : 0.0,
                seconds > 0 ? static_cast<double>(tokens_written) / 1e6 / seconds : 0.0);
  s += buf;
  if (cleaning.total_dropped() > 0) s += "dropped by reason:\n" + cleaning.ToString();
  if (resumed) s += "resumed: documents up to sequence " + std::to_string(resumed_from_sequence) +
                    " and later ones already in their partitions were not written again\n";
  for (const auto& f : incomplete_files) s += "incomplete input: " + f + "\n";
  return s;
}

}  // namespace tokenfeed::ingest
