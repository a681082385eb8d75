// PartitionLayout: where one partition's files live (its directory, lock
// file, segment and index files, the token index) and how to name it in
// error messages: "topic log:/data/t partition 3". ListSegments finds its segment files.
// It does no other I/O and knows nothing of the bytes inside the files.
// A plain value; ListSegments is as thread-safe as the FileSystem.
#pragma once

#include <string>
#include <vector>

#include "base/file_system.h"
#include "tokenfeed/ids.h"
#include "tokenfeed/status.h"

namespace tokenfeed::log {

struct PartitionLayout {
  std::string topic_uri;  // "log:/data/t"
  PartitionId partition;
  std::string dir;  // "/data/t/partition-00003"

  std::string Label() const { return "topic " + topic_uri + " partition " + ToString(partition); }
  std::string SegmentPath(Offset base) const;
  std::string IndexPath(Offset base) const;
  std::string LockPath() const;
  std::string RecoveryPointPath() const;  // recovery_point.h
  std::string TokenIndexPath() const;     // kept by the topic layer (log_format.h)
};

PartitionLayout MakePartitionLayout(const std::string& topic_uri, const std::string& topic_dir, PartitionId partition);

// The base offsets of the partition's segment files, ascending. Other files
// (index, lock, temporary) are skipped. NotFound names the partition when its
// directory is missing.
Result<std::vector<Offset>> ListSegments(FileSystem* fs, const PartitionLayout& layout);

}  // namespace tokenfeed::log
