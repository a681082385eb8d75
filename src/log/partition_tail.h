// ReadPartitionTail: a partition's start offset, end offset and last batch,
// read from its files without a writer: for PartitionReader::EndOffset,
// TopicDirectory::Describe and TopicDirectory::ReadLastRecord. It reads the
// last segment from its last index entry on, so it costs a few small reads,
// not a scan.
// A batch still being written, or a torn tail not yet recovered, does not
// count: the end offset is after the last complete batch whose records and
// data checksum are valid; damaged bytes there are described in `problem`.
// Thread-safe as far as the FileSystem is.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "base/file_system.h"
#include "log/partition_layout.h"
#include "log/partition_recovery.h"
#include "tokenfeed/ids.h"
#include "log/log.h"
#include "tokenfeed/status.h"

namespace tokenfeed::log {

struct PartitionTail {
  std::vector<Offset> segments;  // started segments (a new file without its header yet is left out)
  Offset start_offset;
  Offset end_offset;
  std::optional<BatchLocation> last_batch;
  uint64_t bytes = 0;  // sum of segment file sizes, only with with_sizes
  std::string problem;  // bytes after the last valid batch that are not a batch being written
};

Result<PartitionTail> ReadPartitionTail(FileSystem* fs, const PartitionLayout& layout, bool with_sizes);

// Copies the last record of the batch at `where`.
Result<StoredRecord> ReadLastRecordOfBatch(FileSystem* fs, const PartitionLayout& layout, const BatchLocation& where);

}  // namespace tokenfeed::log
