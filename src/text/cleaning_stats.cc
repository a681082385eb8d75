#include "tokenfeed/cleaning_stats.h"

#include <algorithm>

namespace tokenfeed::text {

uint64_t CleaningStats::total_dropped() const {
  uint64_t total = 0;
  for (uint64_t n : dropped) total += n;
  return total;
}

void CleaningStats::RecordDuplicate(size_t cleaned_bytes) {
  ++dropped_for(DropReason::kDuplicate);
  if (kept > 0) --kept;
  bytes_out -= std::min<uint64_t>(bytes_out, cleaned_bytes);
}

void CleaningStats::Merge(const CleaningStats& other) {
  documents += other.documents;
  kept += other.kept;
  changed += other.changed;
  bytes_in += other.bytes_in;
  bytes_out += other.bytes_out;
  for (size_t i = 0; i < dropped.size(); ++i) dropped[i] += other.dropped[i];
}

namespace {

void AppendRow(std::string_view name, uint64_t n, std::string* out) {
  out->append("  ").append(name);
  out->append(name.size() < 14 ? 14 - name.size() : 1, ' ');
  out->append(std::to_string(n)).push_back('\n');
}

}  // namespace

std::string CleaningStats::ToString() const {
  std::string out;
  AppendRow("documents", documents, &out);
  AppendRow("kept", kept, &out);
  AppendRow("changed", changed, &out);
  AppendRow("bytes_in", bytes_in, &out);
  AppendRow("bytes_out", bytes_out, &out);
  return out + DropsToString();
}

std::string CleaningStats::DropsToString() const {
  std::string out;
  for (size_t i = 0; i < dropped.size(); ++i) {
    if (dropped[i] != 0) AppendRow(DropReasonName(static_cast<DropReason>(i)), dropped[i], &out);
  }
  return out;
}

}  // namespace tokenfeed::text
