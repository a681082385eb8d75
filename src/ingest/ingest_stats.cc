#include <cstdio>
#include <string>

#include "base/json_writer.h"
#include "tokenfeed/drop_reason.h"
#include "tokenfeed/ingest.h"

namespace tokenfeed::ingest {

std::string IngestStats::ToJson(const Status& failed) const {
  std::string out;
  JsonWriter j(&out);
  j.BeginObject();
  j.Key("complete").Bool(failed.ok() && stopped_by_strict.empty() && incomplete_files.empty());
  if (!failed.ok()) j.Key("error").String(failed.ToString());
  if (!stopped_by_strict.empty()) j.Key("stopped_by_strict").String(stopped_by_strict);
  j.Key("documents_read").Uint(documents_read);
  j.Key("documents_written").Uint(documents_written);
  j.Key("documents_skipped_already_in_topic").Uint(documents_skipped);
  j.Key("documents_dropped").Uint(cleaning.total_dropped());
  j.Key("dropped_by_reason").BeginObject();
  for (size_t r = 0; r < text::kDropReasonCount; ++r) {
    j.Key(text::DropReasonName(static_cast<text::DropReason>(r))).Uint(cleaning.dropped[r]);
  }
  j.EndObject();
  j.Key("tokens_written").Uint(tokens_written);
  j.Key("text_bytes").Uint(text_bytes);
  j.Key("record_bytes").Uint(record_bytes);
  j.Key("files").Uint(files);
  j.Key("incomplete_files").BeginArray();
  for (const auto& f : incomplete_files) j.String(f);
  j.EndArray();
  j.Key("recovered").BeginArray();
  for (const auto& r : recovered) j.String(r);
  j.EndArray();
  j.Key("resumed").Bool(resumed);
  j.Key("resumed_from_sequence").Uint(resumed_from_sequence);
  j.Key("seconds").Double(seconds);
  j.EndObject();
  return out;
}

std::string IngestStats::Summary() const {
  char buf[512];
  std::string s;
  std::snprintf(buf, sizeof(buf),
                "ingest: %llu documents read = %llu written + %llu already in the topic + %llu dropped; "
                "%llu tokens; %.1f MB of text -> %.1f MB of records; %.1f s (%.1f MB/s, %.2f M tokens/s)\n",
                static_cast<unsigned long long>(documents_read), static_cast<unsigned long long>(documents_written),
                static_cast<unsigned long long>(documents_skipped),
                static_cast<unsigned long long>(cleaning.total_dropped()),
                static_cast<unsigned long long>(tokens_written), static_cast<double>(text_bytes) / 1e6,
                static_cast<double>(record_bytes) / 1e6, seconds,
                seconds > 0 ? static_cast<double>(text_bytes) / 1e6 / seconds : 0.0,
                seconds > 0 ? static_cast<double>(tokens_written) / 1e6 / seconds : 0.0);
  s += buf;
  if (cleaning.total_dropped() > 0) s += "dropped by reason:\n" + cleaning.DropsToString();
  if (!stopped_by_strict.empty()) s += "stopped: " + stopped_by_strict + "\n";
  if (resumed) s += "resumed: documents up to sequence " + std::to_string(resumed_from_sequence) +
                    " and later ones already in their partitions were not written again\n";
  for (const auto& f : incomplete_files) s += "incomplete input: " + f + "\n";
  for (const auto& r : recovered) s += "recovered: " + r + "\n";
  return s;
}

}  // namespace tokenfeed::ingest
