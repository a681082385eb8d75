// The recovery point of a partition: how far its active segment is known to
// have been synced, so that recovery can tell a torn tail (bytes after the
// last sync, which a power cut may leave partial, reordered or zeroed) from
// damage to bytes that were synced (corruption, kept and reported).
// RecoveryPointWriter appends a record to partition-N/SYNCED after each sync
// of the active segment; LoadRecoveryPoint returns the last valid one. The
// file is synced only at open and Close, so after a power cut it may name an
// earlier sync than the last one: it under-claims, never over-claims.
// Writing it is best effort (a hint, like the index). Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "base/file_system.h"
#include "tokenfeed/ids.h"
#include "tokenfeed/status.h"

namespace tokenfeed::log {

struct RecoveryPoint {
  Offset segment_base;
  uint64_t position = 0;  // every byte of that segment before it was synced
};

// nullopt when the file is missing or holds no valid record.
Result<std::optional<RecoveryPoint>> LoadRecoveryPoint(FileSystem* fs, const std::string& path);

class RecoveryPointWriter {
 public:
  // Starts the file afresh with `point` and syncs it (the writer's open,
  // after its recovery made the segment durable up to point.position). When
  // that fails the file is removed instead (no recovery point: recovery
  // then falls back to its rule for a partition without one); an error only
  // when neither works.
  Status Start(FileSystem* fs, const std::string& path, RecoveryPoint point);
  // Appends `point` (not synced). Starts the file over when it has grown.
  void Note(RecoveryPoint point);
  // Makes the last noted point durable (Close).
  Status Sync();
  void Close();

 private:
  void Append(RecoveryPoint point);

  std::unique_ptr<WritableFile> file_;
  bool ok_ = false;
};

}  // namespace tokenfeed::log
