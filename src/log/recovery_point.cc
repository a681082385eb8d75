#include "log/recovery_point.h"

#include "base/crc32c.h"
#include "base/little_endian.h"
#include "log/log_format.h"

namespace tokenfeed::log {

namespace f = format;

namespace {

// Past this the file is started over (2048 records): it stays small however
// many syncs a segment sees.
constexpr uint64_t kMaxFileBytes = 64 << 10;

void Encode(RecoveryPoint p, uint8_t* out) {
  StoreLittleEndian<uint64_t>(out + 0, f::kRecoveryPointMagic);
  StoreLittleEndian<uint64_t>(out + 8, p.segment_base.value());
  StoreLittleEndian<uint64_t>(out + 16, p.position);
  StoreLittleEndian<uint32_t>(out + 24, f::kRecoveryPointVersion);
  StoreLittleEndian<uint32_t>(out + 28, crc32c::Value(out, 28));
}

}  // namespace

Result<std::optional<RecoveryPoint>> LoadRecoveryPoint(FileSystem* fs, const std::string& path) {
  Result<std::string> text = ReadFileToString(fs, path);
  if (!text.ok()) {
    if (text.status().IsNotFound()) return std::optional<RecoveryPoint>();
    return text.status();
  }
  // The last valid record: records are appended in the order of the syncs
  // they describe, and any one that survived is true.
  std::optional<RecoveryPoint> last;
  const auto* bytes = reinterpret_cast<const uint8_t*>(text->data());
  for (size_t at = 0; at + f::kRecoveryPointSize <= text->size(); at += f::kRecoveryPointSize) {
    const uint8_t* r = bytes + at;
    if (LoadLittleEndian<uint64_t>(r) != f::kRecoveryPointMagic ||
        LoadLittleEndian<uint32_t>(r + 24) != f::kRecoveryPointVersion ||
        LoadLittleEndian<uint32_t>(r + 28) != crc32c::Value(r, 28)) {
      continue;
    }
    last = RecoveryPoint{Offset(LoadLittleEndian<uint64_t>(r + 8)), LoadLittleEndian<uint64_t>(r + 16)};
  }
  return last;
}

Status RecoveryPointWriter::Start(FileSystem* fs, const std::string& path, RecoveryPoint point) {
  file_.reset();
  ok_ = false;
  const bool existed = fs->Stat(path).ok();
  Result<std::unique_ptr<WritableFile>> file = fs->OpenWritable(path, FileSystem::WriteMode::kTruncate);
  Status s = file.status();
  if (s.ok()) {
    file_ = std::move(file).value();
    ok_ = true;
    Append(point);
    s = ok_ ? Sync() : Status::IoError("writing the recovery point '" + path + "' failed");
    // A new file's directory entry must be durable too, or a power cut
    // takes the whole file away.
    if (s.ok() && !existed) s = fs->SyncDir(ParentDir(path));
  }
  if (!s.ok()) {
    // An older file must not stay behind: it could claim more than the
    // segment now holds.
    file_.reset();
    ok_ = false;
    Status removed = fs->RemoveFile(path);
    if (removed.ok() || removed.IsNotFound()) return Status::OK();
    return s;
  }
  return Status::OK();
}

void RecoveryPointWriter::Append(RecoveryPoint point) {
  if (!ok_) return;
  uint8_t record[f::kRecoveryPointSize];
  Encode(point, record);
  if (!file_->Append(record).ok()) ok_ = false;
}

void RecoveryPointWriter::Note(RecoveryPoint point) {
  if (!ok_) return;
  // Started over without a sync: a power cut may bring back the old records,
  // which were true when written and still under-claim.
  if (file_->Size() >= kMaxFileBytes && !file_->Truncate(0).ok()) ok_ = false;
  Append(point);
}

Status RecoveryPointWriter::Sync() {
  if (!ok_) return Status::OK();
  Status s = file_->Sync();
  if (!s.ok()) ok_ = false;
  return s;
}

void RecoveryPointWriter::Close() {
  if (file_) (void)file_->Close();
  file_.reset();
  ok_ = false;
}

}  // namespace tokenfeed::log
