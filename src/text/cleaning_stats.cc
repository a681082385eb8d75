#include "text/cleaning_stats.h"

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

std::string CleaningStats::ToString() const {
  std::string out;
  auto row = [&](std::string_view name, uint64_t n) {
    out.append("  ").append(name);
    out.append(name.size() < 14 ? 14 - name.size() : 1, ' ');
    out.append(std::to_string(n)).push_back('\n');
  };
  row("documents", documents);
  row("kept", kept);
  row("changed", changed);
  row("bytes_in", bytes_in);
  row("bytes_out", bytes_out);
  for (size_t i = 0; i < dropped.size(); ++i) {
    if (dropped[i] != 0) row(DropReasonName(static_cast<DropReason>(i)), dropped[i]);
  }
  return out;
}

}  // namespace tokenfeed::text
