// OpenPartitionWriter: the embedded log's PartitionWriter (log/log.h).
// It takes the partition lock, runs RecoverPartition, and then appends each
// batch with one write at the end of the active segment, rolling to a new
// segment file when the active one is full. See log.h for visibility,
// durability and thread-safety; docs/log_format.md for the crash windows.
#pragma once

#include <memory>

#include "base/file_system.h"
#include "log/partition_layout.h"
#include "log/log.h"

namespace tokenfeed::log {

Result<std::unique_ptr<PartitionWriter>> OpenPartitionWriter(FileSystem* fs, const PartitionLayout& layout,
                                                             const TopicOptions& topic, const WriterOptions& options);

// The text written into a lock file: who holds it.
std::string LockHolderDescription();

}  // namespace tokenfeed::log
