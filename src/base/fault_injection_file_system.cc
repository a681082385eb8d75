#include "base/fault_injection_file_system.h"

#include <algorithm>
#include <cerrno>
#include <random>

namespace tokenfeed {
namespace {

const char* OpName(FaultInjectionFileSystem::Op op) {
  using Op = FaultInjectionFileSystem::Op;
  switch (op) {
    case Op::kOpenWritable: return "open for writing";
    case Op::kAppend: return "write";
    case Op::kSync: return "fdatasync";
    case Op::kTruncate: return "ftruncate";
    case Op::kClose: return "close";
    case Op::kOpenReadable: return "open for reading";
    case Op::kRead: return "read";
    case Op::kStat: return "stat";
    case Op::kListDir: return "list directory";
    case Op::kCreateDir: return "create directory";
    case Op::kRemoveFile: return "remove file";
    case Op::kRemoveDir: return "remove directory";
    case Op::kRename: return "rename";
    case Op::kSyncDir: return "fsync directory";
    case Op::kLockFile: return "lock";
  }
  return "operation";
}

bool IsSameOrUnder(const std::string& path, const std::string& prefix) {
  return path == prefix || (path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0 &&
                            path[prefix.size()] == '/');
}

std::string Rebase(const std::string& path, const std::string& from, const std::string& to) {
  return to + path.substr(from.size());
}

template <typename Map>
void RekeyMap(Map& m, const std::string& from, const std::string& to) {
  std::vector<typename Map::value_type> moved;
  for (auto it = m.begin(); it != m.end();) {
    if (IsSameOrUnder(it->first, from)) {
      moved.emplace_back(Rebase(it->first, from, to), it->second);
      it = m.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& kv : moved) m[kv.first] = kv.second;
}

void RekeySet(std::set<std::string>& s, const std::string& from, const std::string& to) {
  std::vector<std::string> moved;
  for (auto it = s.begin(); it != s.end();) {
    if (IsSameOrUnder(*it, from)) {
      moved.push_back(Rebase(*it, from, to));
      it = s.erase(it);
    } else {
      ++it;
    }
  }
  s.insert(moved.begin(), moved.end());
}

Status PowerCutError(const std::string& path) {
  return Status::IoError("'" + path + "' was opened before a simulated power cut; open it again");
}

}  // namespace

class FaultInjectionFileSystem::File final : public WritableFile {
 public:
  File(FaultInjectionFileSystem* fs, std::unique_ptr<WritableFile> base, uint64_t generation)
      : fs_(fs), base_(std::move(base)), generation_(generation) {}

  Status Append(std::span<const uint8_t> data) override { return fs_->AppendThrough(this, data); }
  Status Sync() override { return fs_->SyncThrough(this); }
  Status Truncate(uint64_t size) override { return fs_->TruncateThrough(this, size); }
  uint64_t Size() const override { return base_->Size(); }
  Status Close() override {
    {
      std::lock_guard<std::mutex> l(fs_->mu_);
      if (generation_ != fs_->generation_) return PowerCutError(path());
      TF_RETURN_IF_ERROR(fs_->CheckFaultLocked(Op::kClose, path()));
    }
    return base_->Close();
  }
  const std::string& path() const override { return base_->path(); }

 private:
  friend class FaultInjectionFileSystem;
  FaultInjectionFileSystem* const fs_;
  std::unique_ptr<WritableFile> base_;
  const uint64_t generation_;
};

class FaultInjectionFileSystem::ReadableFile final : public RandomAccessFile {
 public:
  ReadableFile(FaultInjectionFileSystem* fs, std::unique_ptr<RandomAccessFile> base)
      : fs_(fs), base_(std::move(base)) {}

  Result<size_t> ReadAt(uint64_t position, std::span<uint8_t> dest) override {
    TF_RETURN_IF_ERROR(fs_->CheckFault(Op::kRead, path()));
    return base_->ReadAt(position, dest);
  }
  Result<uint64_t> Size() override { return base_->Size(); }
  Result<std::unique_ptr<MappedFile>> MapReadOnly() override {
    TF_RETURN_IF_ERROR(fs_->CheckFault(Op::kRead, path()));
    return base_->MapReadOnly();
  }
  const std::string& path() const override { return base_->path(); }

 private:
  FaultInjectionFileSystem* const fs_;
  std::unique_ptr<RandomAccessFile> base_;
};

FaultInjectionFileSystem::FaultInjectionFileSystem(FileSystem* base) : base_(base) {}
FaultInjectionFileSystem::~FaultInjectionFileSystem() = default;

void FaultInjectionFileSystem::InjectFault(Fault fault) {
  std::lock_guard<std::mutex> l(mu_);
  faults_.push_back(std::move(fault));
}

void FaultInjectionFileSystem::ClearFaults() {
  std::lock_guard<std::mutex> l(mu_);
  faults_.clear();
}

void FaultInjectionFileSystem::SetFreeSpace(std::optional<uint64_t> bytes) {
  std::lock_guard<std::mutex> l(mu_);
  free_space_ = bytes;
}

std::optional<uint64_t> FaultInjectionFileSystem::free_space() const {
  std::lock_guard<std::mutex> l(mu_);
  return free_space_;
}

uint64_t FaultInjectionFileSystem::UnsyncedBytes(std::string_view path_contains) const {
  std::lock_guard<std::mutex> l(mu_);
  uint64_t total = 0;
  for (const auto& [path, st] : files_) {
    if (path.find(path_contains) != std::string::npos) total += st.size - std::min(st.size, st.synced_size);
  }
  return total;
}

uint64_t FaultInjectionFileSystem::OperationCount(Op op) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = op_counts_.find(op);
  return it == op_counts_.end() ? 0 : it->second;
}

Status FaultInjectionFileSystem::CheckFaultLocked(Op op, const std::string& path, uint64_t* partial_bytes) {
  ++op_counts_[op];
  for (auto it = faults_.begin(); it != faults_.end(); ++it) {
    if (it->op != op || path.find(it->path_contains) == std::string::npos) continue;
    if (it->skip > 0) {
      --it->skip;
      continue;
    }
    const int error = it->error;
    if (partial_bytes != nullptr) *partial_bytes = it->partial_bytes;
    if (it->times == 1) {
      faults_.erase(it);
    } else if (it->times > 1) {
      --it->times;
    }
    return Status::FromErrno(error, std::string(OpName(op)) + " (injected fault)", path);
  }
  return Status::OK();
}

Status FaultInjectionFileSystem::CheckFault(Op op, const std::string& path) {
  std::lock_guard<std::mutex> l(mu_);
  return CheckFaultLocked(op, path);
}

void FaultInjectionFileSystem::NoteNewEntryLocked(const std::string& path) { unsynced_entries_.insert(path); }

Status FaultInjectionFileSystem::AppendThrough(File* file, std::span<const uint8_t> data) {
  std::lock_guard<std::mutex> l(mu_);
  const std::string& path = file->path();
  if (file->generation_ != generation_) return PowerCutError(path);
  uint64_t partial = 0;
  Status result = CheckFaultLocked(Op::kAppend, path, &partial);
  size_t n = data.size();
  if (!result.ok()) n = static_cast<size_t>(std::min<uint64_t>(partial, n));
  if (free_space_ && n > *free_space_) {
    n = static_cast<size_t>(*free_space_);
    result = Status::FromErrno(ENOSPC, "write (simulated full disk)", path);
  }
  const uint64_t before = file->base_->Size();
  Status s = n > 0 ? file->base_->Append(data.first(n)) : Status::OK();
  const uint64_t written = file->base_->Size() - before;
  if (free_space_) *free_space_ -= std::min(*free_space_, written);
  files_[path].size = file->base_->Size();
  if (!s.ok()) return s;
  return result;
}

Status FaultInjectionFileSystem::SyncThrough(File* file) {
  std::lock_guard<std::mutex> l(mu_);
  const std::string& path = file->path();
  if (file->generation_ != generation_) return PowerCutError(path);
  TF_RETURN_IF_ERROR(CheckFaultLocked(Op::kSync, path));
  TF_RETURN_IF_ERROR(file->base_->Sync());
  FileState& st = files_[path];
  st.size = file->base_->Size();
  st.synced_size = st.size;
  return Status::OK();
}

Status FaultInjectionFileSystem::TruncateThrough(File* file, uint64_t size) {
  std::lock_guard<std::mutex> l(mu_);
  const std::string& path = file->path();
  if (file->generation_ != generation_) return PowerCutError(path);
  TF_RETURN_IF_ERROR(CheckFaultLocked(Op::kTruncate, path));
  const uint64_t before = file->base_->Size();
  TF_RETURN_IF_ERROR(file->base_->Truncate(size));
  if (free_space_ && before > size) *free_space_ += before - size;
  FileState& st = files_[path];
  st.size = size;
  st.synced_size = std::min(st.synced_size, size);
  return Status::OK();
}

Result<std::unique_ptr<WritableFile>> FaultInjectionFileSystem::OpenWritable(const std::string& path,
                                                                             WriteMode mode) {
  std::lock_guard<std::mutex> l(mu_);
  TF_RETURN_IF_ERROR(CheckFaultLocked(Op::kOpenWritable, path));
  Result<FileInfo> before = base_->Stat(path);
  TF_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> base_file, base_->OpenWritable(path, mode));
  if (!before.ok()) NoteNewEntryLocked(path);
  auto it = files_.find(path);
  if (it == files_.end()) {
    // A file this object has not written before counts as durable as found.
    const uint64_t size = base_file->Size();
    files_[path] = FileState{size, size};
  } else if (mode == WriteMode::kTruncate) {
    if (free_space_) *free_space_ += it->second.size;
    it->second = FileState{};
  }
  return std::unique_ptr<WritableFile>(new File(this, std::move(base_file), generation_));
}

Result<std::unique_ptr<RandomAccessFile>> FaultInjectionFileSystem::OpenReadable(const std::string& path) {
  TF_RETURN_IF_ERROR(CheckFault(Op::kOpenReadable, path));
  TF_ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> base_file, base_->OpenReadable(path));
  return std::unique_ptr<RandomAccessFile>(new ReadableFile(this, std::move(base_file)));
}

Result<FileInfo> FaultInjectionFileSystem::Stat(const std::string& path) {
  TF_RETURN_IF_ERROR(CheckFault(Op::kStat, path));
  return base_->Stat(path);
}

Result<std::vector<std::string>> FaultInjectionFileSystem::ListDir(const std::string& path) {
  TF_RETURN_IF_ERROR(CheckFault(Op::kListDir, path));
  return base_->ListDir(path);
}

Status FaultInjectionFileSystem::CreateDir(const std::string& path) {
  std::lock_guard<std::mutex> l(mu_);
  TF_RETURN_IF_ERROR(CheckFaultLocked(Op::kCreateDir, path));
  TF_RETURN_IF_ERROR(base_->CreateDir(path));
  NoteNewEntryLocked(path);
  return Status::OK();
}

Status FaultInjectionFileSystem::RemoveFile(const std::string& path) {
  std::lock_guard<std::mutex> l(mu_);
  TF_RETURN_IF_ERROR(CheckFaultLocked(Op::kRemoveFile, path));
  TF_RETURN_IF_ERROR(base_->RemoveFile(path));
  auto it = files_.find(path);
  if (it != files_.end()) {
    if (free_space_) *free_space_ += it->second.size;
    files_.erase(it);
  }
  unsynced_entries_.erase(path);
  return Status::OK();
}

Status FaultInjectionFileSystem::RemoveDir(const std::string& path) {
  std::lock_guard<std::mutex> l(mu_);
  TF_RETURN_IF_ERROR(CheckFaultLocked(Op::kRemoveDir, path));
  TF_RETURN_IF_ERROR(base_->RemoveDir(path));
  unsynced_entries_.erase(path);
  return Status::OK();
}

Status FaultInjectionFileSystem::Rename(const std::string& from, const std::string& to) {
  std::lock_guard<std::mutex> l(mu_);
  TF_RETURN_IF_ERROR(CheckFaultLocked(Op::kRename, from));
  PendingRename pending{from, to, std::nullopt, std::nullopt};
  Result<FileInfo> target = base_->Stat(to);
  if (target.ok() && !target->is_directory) {
    TF_ASSIGN_OR_RETURN(std::string old_contents, ReadFileToString(base_, to));
    pending.replaced_contents = std::move(old_contents);
    auto it = files_.find(to);
    pending.replaced_state = it != files_.end() ? it->second : FileState{target->size, target->size};
  }
  TF_RETURN_IF_ERROR(base_->Rename(from, to));
  files_.erase(to);
  RekeyMap(files_, from, to);
  RekeySet(unsynced_entries_, from, to);
  for (PendingRename& p : pending_renames_) {
    if (IsSameOrUnder(p.from, from)) p.from = Rebase(p.from, from, to);
    if (IsSameOrUnder(p.to, from)) p.to = Rebase(p.to, from, to);
  }
  pending_renames_.push_back(std::move(pending));
  return Status::OK();
}

Status FaultInjectionFileSystem::SyncDir(const std::string& path) {
  std::lock_guard<std::mutex> l(mu_);
  TF_RETURN_IF_ERROR(CheckFaultLocked(Op::kSyncDir, path));
  TF_RETURN_IF_ERROR(base_->SyncDir(path));
  for (auto it = unsynced_entries_.begin(); it != unsynced_entries_.end();) {
    it = ParentDir(*it) == path ? unsynced_entries_.erase(it) : std::next(it);
  }
  std::erase_if(pending_renames_, [&](const PendingRename& p) { return ParentDir(p.to) == path; });
  return Status::OK();
}

Result<std::unique_ptr<FileLock>> FaultInjectionFileSystem::LockFile(const std::string& path,
                                                                     std::string_view holder) {
  TF_RETURN_IF_ERROR(CheckFault(Op::kLockFile, path));
  return base_->LockFile(path, holder);
}

Status FaultInjectionFileSystem::SimulatePowerCut(const PowerCutOptions& options) {
  std::lock_guard<std::mutex> l(mu_);
  ++generation_;
  std::mt19937_64 rng(options.seed);

  // Renames not yet made durable did not happen; newest first, so a chain
  // of renames unwinds in order.
  for (auto it = pending_renames_.rbegin(); it != pending_renames_.rend(); ++it) {
    if (base_->Stat(it->to).ok()) {
      TF_RETURN_IF_ERROR(base_->Rename(it->to, it->from));
      RekeyMap(files_, it->to, it->from);
      RekeySet(unsynced_entries_, it->to, it->from);
    }
    if (it->replaced_contents) {
      TF_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> f, base_->OpenWritable(it->to, WriteMode::kTruncate));
      const std::string& c = *it->replaced_contents;
      TF_RETURN_IF_ERROR(f->Append({reinterpret_cast<const uint8_t*>(c.data()), c.size()}));
      TF_RETURN_IF_ERROR(f->Sync());
      TF_RETURN_IF_ERROR(f->Close());
      files_[it->to] = *it->replaced_state;
    }
  }
  pending_renames_.clear();

  // Unsynced bytes are lost (or, optionally, a random prefix of them kept).
  for (auto it = files_.begin(); it != files_.end();) {
    FileState& st = it->second;
    if (!base_->Stat(it->first).ok()) {
      it = files_.erase(it);
      continue;
    }
    if (st.size > st.synced_size) {
      uint64_t keep = st.synced_size;
      if (options.keep_random_unsynced_prefix) keep += rng() % (st.size - st.synced_size + 1);
      std::string kept;  // the unsynced bytes kept, with holes, when written back out of order
      if (options.keep_random_unsynced_prefix && options.reorder_write_back && keep > st.synced_size) {
        TF_ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> r, base_->OpenReadable(it->first));
        kept.resize(keep - st.synced_size);
        TF_ASSIGN_OR_RETURN(size_t n, r->ReadAt(st.synced_size, {reinterpret_cast<uint8_t*>(kept.data()), kept.size()}));
        kept.resize(n);
        const uint64_t block = std::max<uint64_t>(options.block_bytes, 1);
        for (uint64_t start = st.synced_size / block * block; start < st.synced_size + kept.size(); start += block) {
          if (rng() % 2 == 0) continue;  // this block reached the disk
          const uint64_t from = std::max(start, st.synced_size) - st.synced_size;
          const uint64_t to = std::min<uint64_t>(start + block - st.synced_size, kept.size());
          std::fill(kept.begin() + static_cast<std::ptrdiff_t>(from), kept.begin() + static_cast<std::ptrdiff_t>(to), '\0');
        }
      }
      TF_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> f, base_->OpenWritable(it->first, WriteMode::kAppend));
      TF_RETURN_IF_ERROR(f->Truncate(kept.empty() ? keep : st.synced_size));
      if (!kept.empty()) TF_RETURN_IF_ERROR(f->Append({reinterpret_cast<const uint8_t*>(kept.data()), kept.size()}));
      TF_RETURN_IF_ERROR(f->Sync());
      st.size = f->Size();
    }
    st.synced_size = st.size;
    ++it;
  }

  // Directory entries created since their directory was last synced vanish;
  // deepest first (reverse order puts "a/b" before "a").
  for (auto it = unsynced_entries_.rbegin(); it != unsynced_entries_.rend(); ++it) {
    if (!base_->Stat(*it).ok()) continue;
    TF_RETURN_IF_ERROR(RemoveTree(base_, *it));
    for (auto f = files_.begin(); f != files_.end();) f = IsSameOrUnder(f->first, *it) ? files_.erase(f) : std::next(f);
  }
  unsynced_entries_.clear();
  return Status::OK();
}

}  // namespace tokenfeed
