#include "log/partition_layout.h"

#include <algorithm>

#include "log/log_format.h"

namespace tokenfeed::log {

namespace f = format;

std::string PartitionLayout::SegmentPath(Offset base) const { return JoinPath(dir, f::SegmentFileName(base)); }
std::string PartitionLayout::IndexPath(Offset base) const { return JoinPath(dir, f::IndexFileName(base)); }
std::string PartitionLayout::LockPath() const { return JoinPath(dir, f::kLockFileName); }
std::string PartitionLayout::RecoveryPointPath() const { return JoinPath(dir, f::kRecoveryPointFileName); }
std::string PartitionLayout::TokenIndexPath() const { return JoinPath(dir, f::kTokenIndexFileName); }

PartitionLayout MakePartitionLayout(const std::string& topic_uri, const std::string& topic_dir, PartitionId partition) {
  return PartitionLayout{topic_uri, partition, JoinPath(topic_dir, f::PartitionDirName(partition))};
}

Result<std::vector<Offset>> ListSegments(FileSystem* fs, const PartitionLayout& layout) {
  Result<std::vector<std::string>> names = fs->ListDir(layout.dir);
  if (!names.ok()) {
    if (names.status().IsNotFound()) {
      return Status::NotFound(layout.Label() + ": its directory '" + layout.dir +
                              "' is missing; the topic is damaged or the partition number is wrong");
    }
    return names.status().WithContext(layout.Label());
  }
  std::vector<Offset> bases;
  for (const std::string& name : *names) {
    if (std::optional<Offset> base = f::ParseSegmentFileName(name)) bases.push_back(*base);
  }
  std::sort(bases.begin(), bases.end());
  return bases;
}

}  // namespace tokenfeed::log
