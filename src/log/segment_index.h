// SegmentIndex: the sparse offset -> file position map of one segment (one
// entry at the first batch after every index_interval_bytes of data), so that
// a reader seeks to any offset by a binary search plus a short scan.
// The index is a hint, never the truth: a reader checks the batch an entry
// points at and falls back to scanning the segment when it does not match;
// the writer rebuilds the index of the active segment on every open and of a
// sealed segment whenever its file is missing or damaged.
// Durability: the active segment's index is not synced with its batches;
// a sealed segment's index is synced when the segment is sealed.
// A loaded SegmentIndex is an immutable value.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/file_system.h"
#include "tokenfeed/ids.h"
#include "tokenfeed/status.h"

namespace tokenfeed::log {

struct IndexEntry {
  Offset offset;      // base offset of a batch
  uint64_t position;  // where it starts in the segment file
};

class SegmentIndex {
 public:
  SegmentIndex() = default;
  explicit SegmentIndex(std::vector<IndexEntry> entries) : entries_(std::move(entries)) {}

  // Loads an index file. A trailing partial entry (a write cut short) is
  // dropped. Corruption when the header is wrong or the entries are not
  // increasing; NotFound when the file is missing.
  static Result<SegmentIndex> Load(FileSystem* fs, const std::string& path, Offset base);

  // The last entry at or before `offset`, if any.
  std::optional<IndexEntry> Find(Offset offset) const;
  const std::vector<IndexEntry>& entries() const { return entries_; }

  // The whole file: header and entries.
  static std::string Encode(Offset base, const std::vector<IndexEntry>& entries);
  static void EncodeEntry(Offset base, const IndexEntry& e, uint8_t* out);

 private:
  std::vector<IndexEntry> entries_;
};

}  // namespace tokenfeed::log
