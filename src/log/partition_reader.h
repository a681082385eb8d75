// OpenPartitionReader: the embedded log's PartitionReader (log/log.h).
// Reads batches in order through a SegmentReader (sealed segments mapped,
// the active one through a pread buffer), moves to the next segment file
// when the current one ends, and follows the tail by polling the file size
// with a backoff (1 stat per poll, at most every 10 ms when idle). It takes no lock and never writes: any number of readers in
// any processes may run beside the writer.
// Not thread-safe; batch views are valid until the next call.
#pragma once

#include <memory>

#include "base/file_system.h"
#include "log/partition_layout.h"
#include "log/log.h"

namespace tokenfeed::log {

Result<std::unique_ptr<PartitionReader>> OpenPartitionReader(FileSystem* fs, const PartitionLayout& layout,
                                                             const ReaderOptions& options);

}  // namespace tokenfeed::log
