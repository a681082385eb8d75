// CleaningStats: what happened to the documents of a run: offered, kept,
// changed, bytes in and out, and drops for each DropReason (reader rejects
// and cleaner drops alike). Each thread keeps its own; Merge adds them up.
// A plain value, not synchronised.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "tokenfeed/drop_reason.h"

namespace tokenfeed::text {

struct CleaningStats {
  uint64_t documents = 0;  // offered to the cleaner
  uint64_t kept = 0;
  uint64_t changed = 0;    // kept documents whose text the cleaner modified (trimming included)
  uint64_t bytes_in = 0;   // of the documents offered
  uint64_t bytes_out = 0;  // of the documents kept
  std::array<uint64_t, kDropReasonCount> dropped{};

  uint64_t& dropped_for(DropReason reason) { return dropped[static_cast<size_t>(reason)]; }
  uint64_t dropped_for(DropReason reason) const { return dropped[static_cast<size_t>(reason)]; }
  uint64_t total_dropped() const;

  // A reader reject: the document never reached the cleaner.
  void RecordReject(DropReason reason) { ++dropped_for(reason); }
  // A document the cleaner kept was then found to be a duplicate.
  void RecordDuplicate(size_t cleaned_bytes);

  void Merge(const CleaningStats& other);

  // One line per count, "  documents  40" then each non-zero drop reason,
  // "  duplicate  12", for reports and logs.
  std::string ToString() const;
  // Only the drop reasons with a non-zero count, one line each.
  std::string DropsToString() const;
};

}  // namespace tokenfeed::text
