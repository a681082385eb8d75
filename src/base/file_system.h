// FileSystem: the seam through which the embedded log does all of its file
// I/O, so that tests can swap in FaultInjectionFileSystem and drop every byte
// that was not fsynced, or fail chosen operations with ENOSPC or EIO.
// It is not a general VFS: it has exactly the operations the log needs
// (reads are pread or, for files that never shrink, a read-only mmap). Files
// are opened without following a symbolic link in the last path component
// (InvalidArgument): a link planted in a topic cannot redirect a write.
// Durability follows POSIX: WritableFile bytes are durable after Sync(); a
// new, renamed or removed directory entry is durable after SyncDir() on its
// directory. Bytes are visible to other processes as soon as Append returns.
// FileSystem::Posix() is thread-safe; each file object is used by one thread
// at a time. Files and locks must not outlive the FileSystem that made them.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenfeed/status.h"

namespace tokenfeed {

// A file written only at its end (and cut back with Truncate).
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  // Writes `data` at the end. On error a prefix of `data` may have been
  // written: Size() says how much, so the caller can cut it off again.
  virtual Status Append(std::span<const uint8_t> data) = 0;
  // Makes every appended byte and the file size durable (fdatasync).
  virtual Status Sync() = 0;
  // Cuts the file to `size` bytes (never grows it); the next Append writes
  // there.
  virtual Status Truncate(uint64_t size) = 0;
  // The number of bytes in the file as this object wrote it.
  virtual uint64_t Size() const = 0;
  virtual Status Close() = 0;
  virtual const std::string& path() const = 0;
};

// A read-only memory map of a whole file. Touching it after the file was cut
// shorter raises SIGBUS, so map only files that never shrink while mapped.
class MappedFile {
 public:
  virtual ~MappedFile() = default;
  virtual std::span<const uint8_t> bytes() const = 0;
};

// A file read at any position, possibly while another process appends.
class RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;
  // Reads up to dest.size() bytes at `position`; fewer only at the end of the
  // file. Returns the number read.
  virtual Result<size_t> ReadAt(uint64_t position, std::span<uint8_t> dest) = 0;
  // The current size of the file (it may have grown since it was opened).
  virtual Result<uint64_t> Size() = 0;
  // Maps the file as it is now, for sequential reading without a copy.
  // Unsupported where the file system cannot map (callers then use ReadAt).
  virtual Result<std::unique_ptr<MappedFile>> MapReadOnly() {
    return Status::Unsupported("'" + path() + "' cannot be memory-mapped");
  }
  virtual const std::string& path() const = 0;
};

// An exclusive advisory lock, released when the object is destroyed or the
// process dies.
class FileLock {
 public:
  virtual ~FileLock() = default;
};

// A symbolic link is reported with is_symlink set and the size and kind of
// what it points to (a dangling link: size 0, not a directory).
struct FileInfo {
  uint64_t size = 0;
  bool is_directory = false;
  bool is_symlink = false;
};

class FileSystem {
 public:
  enum class WriteMode {
    kCreateNew,  // the file must not exist yet (AlreadyExists otherwise)
    kTruncate,   // create, or empty an existing file
    kAppend,     // the file must exist; appends continue at its end
  };

  virtual ~FileSystem() = default;

  virtual Result<std::unique_ptr<WritableFile>> OpenWritable(const std::string& path, WriteMode mode) = 0;
  virtual Result<std::unique_ptr<RandomAccessFile>> OpenReadable(const std::string& path) = 0;
  // NotFound when the path does not exist.
  virtual Result<FileInfo> Stat(const std::string& path) = 0;
  // The names in a directory (no "." or ".."), sorted.
  virtual Result<std::vector<std::string>> ListDir(const std::string& path) = 0;
  // AlreadyExists when the path exists.
  virtual Status CreateDir(const std::string& path) = 0;
  virtual Status RemoveFile(const std::string& path) = 0;
  // The directory must be empty.
  virtual Status RemoveDir(const std::string& path) = 0;
  // Atomically replaces `to` (a file, or an empty directory) with `from`.
  virtual Status Rename(const std::string& from, const std::string& to) = 0;
  // Makes the directory's entries (creates, renames, removes) durable.
  virtual Status SyncDir(const std::string& path) = 0;
  // Takes an exclusive lock on `path` (created if missing) and writes
  // `holder` into it, or fails with Busy naming the holder that is written
  // there. Two locks on one path conflict even inside one process.
  virtual Result<std::unique_ptr<FileLock>> LockFile(const std::string& path, std::string_view holder) = 0;

  // The real file system. Lives for the whole program.
  static FileSystem* Posix();
};

// "a/b" + "c" -> "a/b/c".
std::string JoinPath(std::string_view dir, std::string_view name);
// "a/b/c" -> "a/b"; "c" -> "."; "/c" -> "/".
std::string ParentDir(std::string_view path);
// "a/b/c" -> "c".
std::string BaseName(std::string_view path);

// Creates `path` and any missing parents; OK when it already exists as a
// directory. Each created directory is made durable in its parent.
Status CreateDirs(FileSystem* fs, const std::string& path);
// Writes a whole file so that a crash leaves either the old or the new
// contents: temporary file, Sync, Rename, SyncDir.
Status WriteFileAtomically(FileSystem* fs, const std::string& path, std::string_view contents);
Result<std::string> ReadFileToString(FileSystem* fs, const std::string& path);
// Removes a directory tree. Symbolic links in it are removed, never followed.
Status RemoveTree(FileSystem* fs, const std::string& path);

}  // namespace tokenfeed
