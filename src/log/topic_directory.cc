#include <unistd.h>

#include <atomic>
#include <chrono>

#include "base/file_system.h"
#include "log/log_format.h"
#include "log/partition_layout.h"
#include "log/partition_reader.h"
#include "log/partition_tail.h"
#include "log/partition_writer.h"
#include "log/segment_index.h"
#include "log/topic_metadata.h"
#include "log/log.h"

namespace tokenfeed::log {

namespace f = format;

namespace {

std::string Num(uint64_t v) { return std::to_string(v); }

FileSystem* OrPosix(FileSystem* fs) { return fs != nullptr ? fs : FileSystem::Posix(); }

std::string HiddenSibling(const LogUri& u, std::string_view purpose) {
  static std::atomic<uint64_t> counter{0};
  return JoinPath(u.dir, "." + u.topic + "." + std::string(purpose) + "." + std::to_string(::getpid()) + "." +
                             std::to_string(counter.fetch_add(1)));
}

Status CheckTopicOptions(const std::string& uri, const TopicOptions& o) {
  if (o.partitions == 0 || o.partitions > f::kMaxPartitions) {
    return Status::InvalidArgument("creating " + uri + ": a topic needs 1 to " + Num(f::kMaxPartitions) +
                                   " partitions, not " + Num(o.partitions));
  }
  if (o.segment_bytes < f::kMinSegmentBytes || o.segment_bytes > f::kMaxSegmentBytes) {
    return Status::InvalidArgument("creating " + uri + ": segment_bytes must be " + Num(f::kMinSegmentBytes) +
                                   " to " + Num(f::kMaxSegmentBytes) + ", not " + Num(o.segment_bytes));
  }
  if (o.index_interval_bytes == 0) {
    return Status::InvalidArgument("creating " + uri + ": index_interval_bytes must be at least 1");
  }
  return Status::OK();
}

// Writes a file with a 32-byte segment or index header and syncs it.
Status WriteHeaderFile(FileSystem* fs, const std::string& path, uint64_t magic, uint32_t version) {
  uint8_t header[f::kSegmentHeaderSize];
  f::EncodeFileHeader(magic, version, Offset(0), header);
  TF_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, fs->OpenWritable(path, FileSystem::WriteMode::kCreateNew));
  TF_RETURN_IF_ERROR(file->Append(header));
  TF_RETURN_IF_ERROR(file->Sync());
  return file->Close();
}

Status BuildTopicDirectory(FileSystem* fs, const std::string& dir, const TopicOptions& options,
                           const TopicMetadata& meta) {
  TF_RETURN_IF_ERROR(fs->CreateDir(dir));
  for (uint32_t p = 0; p < options.partitions; ++p) {
    const std::string pdir = JoinPath(dir, f::PartitionDirName(PartitionId(p)));
    TF_RETURN_IF_ERROR(fs->CreateDir(pdir));
    TF_RETURN_IF_ERROR(
        WriteHeaderFile(fs, JoinPath(pdir, f::SegmentFileName(Offset(0))), f::kSegmentMagic, f::kSegmentVersion));
    TF_RETURN_IF_ERROR(
        WriteHeaderFile(fs, JoinPath(pdir, f::IndexFileName(Offset(0))), f::kIndexMagic, f::kIndexVersion));
    TF_RETURN_IF_ERROR(fs->SyncDir(pdir));
  }
  TF_RETURN_IF_ERROR(WriteFileAtomically(fs, JoinPath(dir, f::kMetadataFileName), EncodeTopicMetadata(meta)));
  return fs->SyncDir(dir);
}

}  // namespace

std::string RecoveryReport::ToString() const {
  if (clean() && rebuilt_indexes == 0) return "clean";
  std::string s;
  if (!truncated_segment.empty()) {
    s += "cut " + Num(truncated_bytes) + " bytes off '" + truncated_segment + "' at position " +
         Num(truncated_at_position) + " (" + truncation_reason + ")";
  }
  if (damage) {
    if (!s.empty()) s += "; ";
    s += "damage discarded on request";
    if (!quarantined_file.empty()) s += ", its bytes kept in '" + quarantined_file + "'";
  }
  for (const std::string& r : removed_segments) {
    if (!s.empty()) s += "; ";
    s += "removed segment '" + r + "' that a crash left without a header";
  }
  if (rebuilt_indexes > 0) {
    if (!s.empty()) s += "; ";
    s += "rebuilt " + Num(rebuilt_indexes) + " index file(s)";
  }
  return s;
}

TopicDirectory::TopicDirectory(FileSystem* fs, LogUri uri, TopicOptions options, int64_t created_unix_ms, std::string created_by)
    : fs_(fs),
      location_(std::move(uri)),
      uri_(location_.ToString()),
      options_(options),
      created_unix_ms_(created_unix_ms),
      created_by_(std::move(created_by)) {}

TopicDirectory::~TopicDirectory() = default;

Result<std::unique_ptr<TopicDirectory>> TopicDirectory::Create(std::string_view uri, const TopicOptions& options, FileSystem* fs) {
  fs = OrPosix(fs);
  TF_ASSIGN_OR_RETURN(LogUri u, ParseLogUri(uri));
  const std::string shown = u.ToString();
  TF_RETURN_IF_ERROR(CheckTopicOptions(shown, options));
  TF_RETURN_IF_ERROR(CreateDirs(fs, u.dir).WithContext("creating " + shown));
  const std::string path = u.path();
  if (fs->Stat(path).ok()) {
    return Status::AlreadyExists("topic " + shown + " already exists ('" + path +
                                 "'); open it, or delete it first to start over");
  }

  TopicMetadata meta;
  meta.format_version = f::kMetadataVersion;
  meta.partitions = options.partitions;
  meta.segment_bytes = options.segment_bytes;
  meta.index_interval_bytes = options.index_interval_bytes;
  meta.created_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  meta.created_by = LockHolderDescription();

  // Built aside and renamed into place: a crash leaves no half-made topic
  // under the real name (at worst a hidden directory, harmless to delete).
  const std::string temp = HiddenSibling(u, "creating");
  Status s = BuildTopicDirectory(fs, temp, options, meta);
  if (s.ok()) s = fs->Rename(temp, path);
  if (!s.ok()) {
    (void)RemoveTree(fs, temp);
    if (fs->Stat(path).ok()) return Status::AlreadyExists("topic " + shown + " was created by someone else meanwhile");
    return s.WithContext("creating topic " + shown);
  }
  TF_RETURN_IF_ERROR(fs->SyncDir(u.dir).WithContext("creating topic " + shown));
  return std::unique_ptr<TopicDirectory>(new TopicDirectory(fs, std::move(u), options, meta.created_unix_ms, meta.created_by));
}

Result<std::unique_ptr<TopicDirectory>> TopicDirectory::Open(std::string_view uri, FileSystem* fs) {
  fs = OrPosix(fs);
  TF_ASSIGN_OR_RETURN(LogUri u, ParseLogUri(uri));
  const std::string shown = u.ToString();
  const std::string meta_path = JoinPath(u.path(), f::kMetadataFileName);
  Result<std::string> text = ReadFileToString(fs, meta_path);
  if (!text.ok()) {
    if (!text.status().IsNotFound()) return text.status().WithContext("opening topic " + shown);
    const std::string topic_dir = u.path();
    if (fs->Stat(topic_dir).ok()) {
      return Status::NotFound("'" + topic_dir + "' exists but is not a tokenfeed topic (it has no " +
                              std::string(f::kMetadataFileName) + "); give the URI of a topic, or create one");
    }
    return Status::NotFound("topic " + shown + " does not exist; create it first");
  }
  TF_ASSIGN_OR_RETURN(TopicMetadata m, ParseTopicMetadata(*text, meta_path));
  TopicOptions options;
  options.partitions = m.partitions;
  options.segment_bytes = m.segment_bytes;
  options.index_interval_bytes = m.index_interval_bytes;
  return std::unique_ptr<TopicDirectory>(new TopicDirectory(fs, std::move(u), options, m.created_unix_ms, m.created_by));
}

Status TopicDirectory::Delete(std::string_view uri, FileSystem* fs) {
  fs = OrPosix(fs);
  // Only a directory whose metadata checks out is deleted: never an
  // arbitrary directory someone named by mistake.
  TF_ASSIGN_OR_RETURN(std::unique_ptr<TopicDirectory> topic, Open(uri, fs));
  std::vector<std::unique_ptr<FileLock>> locks;
  for (uint32_t p = 0; p < topic->partition_count(); ++p) {
    const PartitionLayout layout = MakePartitionLayout(topic->uri(), topic->location_.path(), PartitionId(p));
    Result<std::unique_ptr<FileLock>> lock = fs->LockFile(layout.LockPath(), LockHolderDescription());
    if (!lock.ok()) {
      if (lock.status().code() == StatusCode::kBusy) {
        return Status::Busy("cannot delete " + topic->uri() + ": partition " + ToString(PartitionId(p)) +
                            " has a writer (" + lock.status().message() + "); stop it first");
      }
      return lock.status().WithContext("deleting " + topic->uri());
    }
    locks.push_back(std::move(lock).value());
  }
  // Renamed away first, so the topic disappears at once; the files go after.
  const std::string doomed = HiddenSibling(topic->location_, "deleting");
  TF_RETURN_IF_ERROR(fs->Rename(topic->location_.path(), doomed).WithContext("deleting " + topic->uri()));
  TF_RETURN_IF_ERROR(fs->SyncDir(topic->location_.dir).WithContext("deleting " + topic->uri()));
  locks.clear();
  return RemoveTree(fs, doomed).WithContext("deleting " + topic->uri() + " (it is gone; removing its files)");
}

Status TopicDirectory::CheckPartition(PartitionId partition) const {
  if (partition.value() >= options_.partitions) {
    return Status::InvalidArgument("topic " + uri_ + " has " + Num(options_.partitions) + " partitions (0 to " +
                                   Num(options_.partitions - 1) + "); there is no partition " + ToString(partition));
  }
  return Status::OK();
}

Result<std::unique_ptr<PartitionWriter>> TopicDirectory::OpenWriter(PartitionId partition, const WriterOptions& options) {
  TF_RETURN_IF_ERROR(CheckPartition(partition));
  return OpenPartitionWriter(fs_, MakePartitionLayout(uri_, location_.path(), partition), options_, options);
}

std::string TopicDirectory::TokenIndexPath(PartitionId partition) const {
  return MakePartitionLayout(uri_, location_.path(), partition).TokenIndexPath();
}

Result<std::unique_ptr<PartitionReader>> TopicDirectory::OpenReader(PartitionId partition, const ReaderOptions& options) {
  TF_RETURN_IF_ERROR(CheckPartition(partition));
  return OpenPartitionReader(fs_, MakePartitionLayout(uri_, location_.path(), partition), options);
}

Result<TopicDescription> TopicDirectory::Describe() {
  TopicDescription d;
  d.uri = uri_;
  d.format_version = f::kMetadataVersion;
  d.options = options_;
  d.created_unix_ms = created_unix_ms_;
  d.created_by = created_by_;
  for (uint32_t p = 0; p < options_.partitions; ++p) {
    const PartitionLayout layout = MakePartitionLayout(uri_, location_.path(), PartitionId(p));
    TF_ASSIGN_OR_RETURN(PartitionTail tail, ReadPartitionTail(fs_, layout, /*with_sizes=*/true));
    PartitionDescription pd;
    pd.partition = PartitionId(p);
    pd.start_offset = tail.start_offset;
    pd.end_offset = tail.end_offset;
    pd.record_count = tail.end_offset - tail.start_offset;
    pd.bytes = tail.bytes;
    pd.segment_count = static_cast<uint32_t>(tail.segments.size());
    pd.problem = std::move(tail.problem);
    d.partitions.push_back(pd);
  }
  return d;
}

Result<std::optional<StoredRecord>> TopicDirectory::ReadLastRecord(PartitionId partition) {
  TF_RETURN_IF_ERROR(CheckPartition(partition));
  const PartitionLayout layout = MakePartitionLayout(uri_, location_.path(), partition);
  TF_ASSIGN_OR_RETURN(PartitionTail tail, ReadPartitionTail(fs_, layout, /*with_sizes=*/false));
  if (!tail.last_batch) return std::optional<StoredRecord>();
  TF_ASSIGN_OR_RETURN(StoredRecord r, ReadLastRecordOfBatch(fs_, layout, *tail.last_batch));
  return std::optional<StoredRecord>(std::move(r));
}

}  // namespace tokenfeed::log
