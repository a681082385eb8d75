// TokenIndexWriter: keeps a log partition's token index (TOKENS,
// docs/log_format.md "Token index") in step with its records, for the
// topic layer's log writer (log_topic.cc): Open repairs the file to match
// the partition's records exactly, Append adds the entries of each batch
// the partition writer has just appended. It does not read the index for
// others (token_index_file.h, tokenfeed/token_index.h) and is not a log
// writer: it relies on the partition writer's lock and recovery.
// Visibility and durability: entries are written with one plain write per
// batch, after the batch, and never synced: a crash may leave them behind
// the records, cut, or torn, and the next Open repairs that from the
// records (readers count a missing tail themselves meanwhile).
// Thread-safety: used with its partition writer, by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/file_system.h"
#include "log/log.h"
#include "tokenfeed/ids.h"
#include "tokenfeed/status.h"

namespace tokenfeed::topic {

class TokenIndexWriter {
 public:
  // Entries at the end of the file whose order Open checks: a crash can
  // only have damaged what was written last, and reading the whole file
  // would cost 8 bytes per record at every open.
  static constexpr uint64_t kCheckedTailEntries = 4096;

  // Makes the partition's TOKENS match its records [start, end) (end: the
  // open partition writer's end offset): creates it when missing, cuts off
  // entries past `end` (the log's recovery cut a torn tail) and a torn
  // partial entry, and adds the entries it lacks by reading those records.
  // Only the header and the last kCheckedTailEntries kept entries are
  // checked (readers check the entries they read): a damaged file (bad
  // magic or header, a decrease in that tail) is rebuilt from the records,
  // and *note says so (else it is left empty).
  // The index is derived from the records, so a failure to repair it (an
  // I/O error, records that end early) does not fail Open: the writer it
  // returns is inactive, *note names the file and the reason, and a file
  // that was damaged is removed so that readers count the records instead.
  // Errors, nothing changed: Unsupported for a file of a greater version,
  // InvalidArgument for a symbolic link (never followed); both name the file.
  static Result<std::unique_ptr<TokenIndexWriter>> Open(log::TopicDirectory* topic, PartitionId partition,
                                                        Offset end, std::string* note);

  // Adds an entry for each record of `batch`, which was just appended to
  // the log as it is, from offset `first`. Best effort, since the records
  // are stored already: when the index does not cover exactly the offsets
  // before `first`, or the write fails (a full disk), the index stops here
  // for the rest of this writer's life (readers count the rest; the next
  // Open repairs it) and the reason is returned, once; else OK.
  Status Append(const log::BatchBuilder& batch, Offset first);
  // Whether appends still reach the file.
  bool active() const { return file_ != nullptr; }
  // The last entry: the token ids of the records appended so far.
  uint64_t total() const { return total_; }
  void Close();

 private:
  TokenIndexWriter(std::string path, std::unique_ptr<WritableFile> file, uint64_t entry_count, uint64_t total)
      : path_(std::move(path)), file_(std::move(file)), entry_count_(entry_count), total_(total) {}

  std::string path_;
  std::unique_ptr<WritableFile> file_;
  uint64_t entry_count_ = 0;  // entries in the file: the offsets [0, entry_count_) it covers
  uint64_t total_ = 0;
  std::vector<uint8_t> entries_;  // of the batch being added; its capacity is kept
};

}  // namespace tokenfeed::topic
