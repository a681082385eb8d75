// FaultInjectionFileSystem: a FileSystem for tests that forwards to a real one
// and remembers what is not yet durable, so that SimulatePowerCut() can undo
// it: file bytes not fsynced (all of them, a random prefix, or blocks
// written back out of order, leaving holes of zeros), files and directories
// created since their directory was last synced, renames not yet synced. It also fails chosen
// operations (EIO, ENOSPC, ...) and models a disk with limited free space.
// It is not a crash simulator for other processes: only I/O done through this
// object is tracked. Removes and truncates count as durable at once.
// Thread-safe; open files from before a power cut fail every later call.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/file_system.h"

namespace tokenfeed {

class FaultInjectionFileSystem final : public FileSystem {
 public:
  enum class Op {
    kOpenWritable,
    kAppend,
    kSync,
    kTruncate,
    kClose,
    kOpenReadable,
    kRead,
    kStat,
    kListDir,
    kCreateDir,
    kRemoveFile,
    kRemoveDir,
    kRename,
    kSyncDir,
    kLockFile,
  };

  // Fails the matching operations: those of kind `op` on a path containing
  // `path_contains`, after letting `skip` of them succeed, `times` times
  // (0 = every time from then on). An Append that fails first writes
  // `partial_bytes` of its data, as a real write may do.
  struct Fault {
    Op op = Op::kAppend;
    std::string path_contains;
    int error = 5;  // EIO
    uint32_t skip = 0;
    uint32_t times = 1;
    uint64_t partial_bytes = 0;
  };

  struct PowerCutOptions {
    // false: every unsynced byte is lost. true: each file keeps a random
    // prefix of its unsynced bytes, as when the kernel had written some pages
    // back, which leaves torn batches at the tail.
    bool keep_random_unsynced_prefix = false;
    // With keep_random_unsynced_prefix: write-back out of order. The file
    // keeps a random length of its unsynced bytes (its size reached the
    // disk), but within that length each block of unsynced bytes (aligned in
    // the file) was written back or not, at random; one that was not reads as
    // zeros, as a hole or an unwritten extent does. Leaves holes inside the
    // kept bytes, and valid batches after torn ones.
    bool reorder_write_back = false;
    uint64_t block_bytes = 512;
    uint64_t seed = 1;
  };

  explicit FaultInjectionFileSystem(FileSystem* base = FileSystem::Posix());
  ~FaultInjectionFileSystem() override;

  void InjectFault(Fault fault);
  void ClearFaults();
  // Bytes that appends may still add before they fail with ENOSPC (the
  // failing Append writes what fits). Truncates and removes of files written
  // through this object give space back. nullopt: unlimited.
  void SetFreeSpace(std::optional<uint64_t> bytes);
  std::optional<uint64_t> free_space() const;

  // Undoes everything not durable, as a power cut followed by a reboot
  // would. Files opened before stop working; open new ones afterwards.
  Status SimulatePowerCut(const PowerCutOptions& options);
  Status SimulatePowerCut() { return SimulatePowerCut(PowerCutOptions()); }

  // Bytes appended but not yet synced, over all files whose path contains
  // `path_contains`.
  uint64_t UnsyncedBytes(std::string_view path_contains = {}) const;
  // The number of operations of kind `op` so far (for tests that pick a
  // fault point at random among the real ones).
  uint64_t OperationCount(Op op) const;

  Result<std::unique_ptr<WritableFile>> OpenWritable(const std::string& path, WriteMode mode) override;
  Result<std::unique_ptr<RandomAccessFile>> OpenReadable(const std::string& path) override;
  Result<FileInfo> Stat(const std::string& path) override;
  Result<std::vector<std::string>> ListDir(const std::string& path) override;
  Status CreateDir(const std::string& path) override;
  Status RemoveFile(const std::string& path) override;
  Status RemoveDir(const std::string& path) override;
  Status Rename(const std::string& from, const std::string& to) override;
  Status SyncDir(const std::string& path) override;
  Result<std::unique_ptr<FileLock>> LockFile(const std::string& path, std::string_view holder) override;

 private:
  class File;
  class ReadableFile;
  friend class File;
  friend class ReadableFile;

  struct FileState {
    uint64_t size = 0;
    uint64_t synced_size = 0;
  };
  struct PendingRename {
    std::string from;
    std::string to;
    std::optional<std::string> replaced_contents;  // what `to` held before, if it was a file
    std::optional<FileState> replaced_state;
  };

  // Returns the injected error for this operation, or OK. Needs mu_.
  Status CheckFaultLocked(Op op, const std::string& path, uint64_t* partial_bytes = nullptr);
  Status CheckFault(Op op, const std::string& path);
  void NoteNewEntryLocked(const std::string& path);
  Status AppendThrough(File* file, std::span<const uint8_t> data);
  Status SyncThrough(File* file);
  Status TruncateThrough(File* file, uint64_t size);

  FileSystem* const base_;
  mutable std::mutex mu_;
  uint64_t generation_ = 0;  // bumped by a power cut; older files are dead
  std::vector<Fault> faults_;
  std::optional<uint64_t> free_space_;
  std::map<std::string, FileState> files_;
  std::set<std::string> unsynced_entries_;  // created since the parent was synced
  std::vector<PendingRename> pending_renames_;
  std::map<Op, uint64_t> op_counts_;
};

}  // namespace tokenfeed
