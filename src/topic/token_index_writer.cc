#include "topic/token_index_writer.h"

#include <algorithm>
#include <chrono>

#include "base/little_endian.h"
#include "log/log_format.h"
#include "topic/token_index_file.h"

namespace tokenfeed::topic {

namespace f = log::format;

namespace {

std::string Num(uint64_t v) { return std::to_string(v); }

// Entries buffered before a write while repairing (512 KiB).
constexpr size_t kRepairChunkEntries = 64 << 10;

// Appends the entries of offsets [from, end) to `out`, *total being entry
// from - 1 (0 when from is 0): offsets below the partition's start hold no
// records and add nothing; the others are read from the log.
Status AddEntriesFromLog(log::TopicDirectory* topic, PartitionId partition, WritableFile* out, uint64_t from,
                         Offset end, uint64_t* total) {
  if (from >= end.value()) return Status::OK();
  TF_ASSIGN_OR_RETURN(std::unique_ptr<log::PartitionReader> reader, topic->OpenReader(partition));
  const uint64_t start = reader->position().value();
  std::vector<uint8_t> chunk;
  chunk.reserve(kRepairChunkEntries * f::kTokenIndexEntrySize);
  auto add = [&](uint64_t value) -> Status {
    chunk.resize(chunk.size() + f::kTokenIndexEntrySize);
    StoreLittleEndian<uint64_t>(chunk.data() + chunk.size() - f::kTokenIndexEntrySize, value);
    if (chunk.size() < kRepairChunkEntries * f::kTokenIndexEntrySize) return Status::OK();
    Status s = out->Append(chunk);
    chunk.clear();
    return s;
  };
  uint64_t next = from;
  for (; next < std::min(start, end.value()); ++next) TF_RETURN_IF_ERROR(add(*total));
  if (next < end.value()) TF_RETURN_IF_ERROR(reader->Seek(Offset(next)));
  while (next < end.value()) {
    TF_ASSIGN_OR_RETURN(log::BatchView batch, reader->Read(std::chrono::milliseconds(0)));
    if (batch.empty()) {
      return Status::Corruption(topic->uri() + " partition " + ToString(partition) + ": its records end at offset " +
                                Num(next) + ", before the writer's end offset " + ToString(end) +
                                ", while its token index was being repaired");
    }
    for (const log::LogRecord& r : batch) {
      if (next >= end.value()) break;
      if (__builtin_add_overflow(*total, RecordTokenCount(r.bytes), total)) {
        // Only a damaged entry kept from before can be this large.
        return Status::OutOfRange(topic->uri() + " partition " + ToString(partition) +
                                  ": its token index's entries reach " + Num(*total) +
                                  " ids, too many to count the record at offset " + Num(next) + " on from");
      }
      TF_RETURN_IF_ERROR(add(*total));
      ++next;
    }
  }
  return chunk.empty() ? Status::OK() : out->Append(chunk);
}

// A new TOKENS with the entries of offsets [0, end), written beside the old
// one and renamed over it, so that a reader sees the old file or the new one.
Status Rebuild(log::TopicDirectory* topic, PartitionId partition, const std::string& path, Offset end,
               uint64_t* total) {
  FileSystem* fs = topic->file_system();
  const std::string temp = path + ".rebuild";
  TF_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> out, fs->OpenWritable(temp, FileSystem::WriteMode::kTruncate));
  uint8_t header[f::kTokenIndexHeaderSize];
  EncodeTokenIndexHeader(header);
  *total = 0;
  Status s = out->Append(header);
  if (s.ok()) s = AddEntriesFromLog(topic, partition, out.get(), 0, end, total);
  if (s.ok()) s = out->Close();
  if (s.ok()) s = fs->Rename(temp, path);
  if (!s.ok()) {
    (void)fs->RemoveFile(temp);
    return s;
  }
  return Status::OK();
}

}  // namespace

Result<std::unique_ptr<TokenIndexWriter>> TokenIndexWriter::Open(log::TopicDirectory* topic, PartitionId partition,
                                                                 Offset end, std::string* note) {
  note->clear();
  FileSystem* fs = topic->file_system();
  const std::string path = topic->TokenIndexPath(partition);
  auto context = [&](const Status& s) {
    const std::string label = topic->uri() + " partition " + ToString(partition);
    const bool says_so = s.message().find("token index") != std::string::npos;
    return s.WithContext(says_so ? label : label + ": keeping the token index '" + path + "'");
  };
  // A repair that failed: the writer goes on without the index.
  auto inactive = [&](const Status& s, bool remove_file) {
    std::string reason = s.message();
    if (reason.find(path) == std::string::npos) reason = "token index '" + path + "': " + reason;
    if (!note->empty()) reason = *note + "; rebuilding it failed: " + reason;
    *note = reason + "; the index is off until the partition's writer is opened again";
    if (remove_file) {
      Status removed = fs->RemoveFile(path);
      if (removed.ok()) {
        *note += " (the damaged file was removed: readers count the records)";
      } else if (!removed.IsNotFound()) {
        *note += " (removing the damaged file failed too: " + removed.message() + ")";
      }
    }
    return std::unique_ptr<TokenIndexWriter>(new TokenIndexWriter(path, nullptr, 0, 0));
  };

  bool rebuild = false;
  bool damaged = false;
  uint64_t keep = 0;   // entries of the file that stay
  uint64_t total = 0;  // entry keep - 1
  Result<TokenIndexFile> file = TokenIndexFile::Open(fs, path);
  if (!file.ok()) {
    const Status& s = file.status();
    if (s.code() == StatusCode::kUnsupported || s.code() == StatusCode::kInvalidArgument) return context(s);  // deliberate refusals
    if (!s.IsNotFound() && !s.IsCorruption()) return inactive(s, false);                  // I/O
    rebuild = true;
    if (s.IsCorruption()) {
      *note = s.message();
      damaged = true;
    }
  } else if (file->torn_header()) {
    rebuild = true;  // a crash while it was created: nothing was in it
  } else {
    keep = std::min(file->entry_count(), end.value());
    const uint64_t tail = keep > kCheckedTailEntries ? keep - kCheckedTailEntries : 0;
    Status order = file->CheckOrder(tail, keep, &total);
    if (order.IsCorruption()) {
      rebuild = true;
      damaged = true;
      *note = order.message();
    } else if (!order.ok()) {
      return inactive(order, false);
    }
  }

  if (rebuild) {
    Status s = Rebuild(topic, partition, path, end, &total);
    if (!s.ok()) return inactive(s, damaged);
    if (!note->empty()) *note += "; rebuilt it from the partition's records below offset " + ToString(end);
  }
  Result<std::unique_ptr<WritableFile>> out = fs->OpenWritable(path, FileSystem::WriteMode::kAppend);
  if (!out.ok()) return inactive(out.status(), false);
  if (!rebuild) {
    // Cut a torn entry and entries past the records, then add those missing:
    // they go on from the last entry kept.
    const uint64_t want = f::kTokenIndexHeaderSize + keep * f::kTokenIndexEntrySize;
    Status s = (*out)->Size() > want ? (*out)->Truncate(want) : Status::OK();
    if (s.ok()) s = AddEntriesFromLog(topic, partition, out->get(), keep, end, &total);
    if (s.code() == StatusCode::kOutOfRange) {
      // A kept entry too large to go on from is damage the checks of the
      // tail did not see: the whole file is rebuilt.
      (void)(*out)->Close();
      *note = "token index '" + path + "': " + s.message();
      s = Rebuild(topic, partition, path, end, &total);
      if (!s.ok()) return inactive(s, true);
      *note += "; rebuilt it from the partition's records below offset " + ToString(end);
      out = fs->OpenWritable(path, FileSystem::WriteMode::kAppend);
      if (!out.ok()) return inactive(out.status(), false);
    }
    if (!s.ok()) {
      (void)(*out)->Close();
      return inactive(s, false);  // the entries written are true; readers count the rest
    }
  }
  return std::unique_ptr<TokenIndexWriter>(new TokenIndexWriter(path, std::move(out).value(), end.value(), total));
}

Status TokenIndexWriter::Append(const log::BatchBuilder& batch, Offset first) {
  if (file_ == nullptr || batch.empty()) return Status::OK();
  if (first.value() != entry_count_) {
    file_.reset();
    return Status::Internal("token index '" + path_ + "' covers offsets [0, " + Num(entry_count_) +
                            ") but the batch just appended starts at offset " + ToString(first) +
                            ": the index stops here for this writer; the next open of the partition's writer "
                            "repairs it, readers count the records meanwhile");
  }
  entries_.resize(size_t{batch.record_count()} * f::kTokenIndexEntrySize);
  uint8_t* p = entries_.data();
  for (const log::LogRecord& r : batch.records()) {
    if (__builtin_add_overflow(total_, RecordTokenCount(r.bytes), &total_)) {
      file_.reset();
      return Status::Internal("token index '" + path_ + "' holds a last entry too large to count offset " +
                              ToString(first) + "'s batch on from: the index stops here for this writer; the next "
                              "open of the partition's writer rebuilds it, readers count the records meanwhile");
    }
    StoreLittleEndian<uint64_t>(p, total_);
    p += f::kTokenIndexEntrySize;
  }
  // Whatever part of the write landed is true; a torn last entry is ignored
  // by readers and cut by the next Open.
  if (Status s = file_->Append(entries_); !s.ok()) {
    file_.reset();
    return s.WithContext("token index '" + path_ + "': appending entries from offset " + ToString(first) +
                         " failed; the index stops here for this writer, readers count the records and the next " +
                         "open of the partition's writer repairs it");
  }
  entry_count_ += batch.record_count();
  return Status::OK();
}

void TokenIndexWriter::Close() {
  if (file_ != nullptr) (void)file_->Close();
  file_.reset();
}

}  // namespace tokenfeed::topic
