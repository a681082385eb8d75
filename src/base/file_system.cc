#include "base/file_system.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

namespace tokenfeed {
namespace {

// Retries a system call that a signal interrupted.
template <typename F>
auto RetryOnEintr(F f) {
  for (;;) {
    auto r = f();
    if (r >= 0 || errno != EINTR) return r;
  }
}

// An open that met a symbolic link where a file was expected (O_NOFOLLOW):
// the log never follows links in its own directories, since a link planted
// there (a LOCK pointing at someone's file) would make it write elsewhere.
Status OpenError(int err, std::string_view operation, const std::string& path) {
  if (err == ELOOP) {
    return Status::InvalidArgument(std::string(operation) + " '" + path +
                                   "': it is a symbolic link, and files of the log are never opened through links; "
                                   "replace the link with the file itself");
  }
  return Status::FromErrno(err, operation, path);
}

class PosixWritableFile final : public WritableFile {
 public:
  PosixWritableFile(std::string path, int fd, uint64_t size) : path_(std::move(path)), fd_(fd), size_(size) {}
  ~PosixWritableFile() override {
    if (fd_ >= 0) ::close(fd_);
  }

  Status Append(std::span<const uint8_t> data) override {
    if (fd_ < 0) return Status::IoError("append to '" + path_ + "': the file is closed");
    const uint8_t* p = data.data();
    size_t left = data.size();
    while (left > 0) {
      // pwrite at our own position: after a Truncate the next byte belongs at
      // the new end, whatever the kernel's file offset says.
      const ssize_t n = RetryOnEintr([&] { return ::pwrite(fd_, p, left, static_cast<off_t>(size_)); });
      if (n < 0) return Status::FromErrno(errno, "write", path_);
      if (n == 0) return Status::IoError("write '" + path_ + "': the kernel accepted no bytes");
      p += n;
      left -= static_cast<size_t>(n);
      size_ += static_cast<uint64_t>(n);
    }
    return Status::OK();
  }

  Status Sync() override {
    if (fd_ < 0) return Status::IoError("sync '" + path_ + "': the file is closed");
    if (RetryOnEintr([&] { return ::fdatasync(fd_); }) != 0) return Status::FromErrno(errno, "fdatasync", path_);
    return Status::OK();
  }

  Status Truncate(uint64_t size) override {
    if (fd_ < 0) return Status::IoError("truncate '" + path_ + "': the file is closed");
    if (size > size_) return Status::InvalidArgument("truncate '" + path_ + "': cannot grow a file");
    if (RetryOnEintr([&] { return ::ftruncate(fd_, static_cast<off_t>(size)); }) != 0) {
      return Status::FromErrno(errno, "ftruncate", path_);
    }
    size_ = size;
    return Status::OK();
  }

  uint64_t Size() const override { return size_; }

  Status Close() override {
    if (fd_ < 0) return Status::OK();
    const int rc = ::close(fd_);
    fd_ = -1;
    if (rc != 0) return Status::FromErrno(errno, "close", path_);
    return Status::OK();
  }

  const std::string& path() const override { return path_; }

 private:
  std::string path_;
  int fd_;
  uint64_t size_;
};

class PosixMappedFile final : public MappedFile {
 public:
  PosixMappedFile(void* data, size_t size) : data_(data), size_(size) {}
  ~PosixMappedFile() override {
    if (size_ > 0) ::munmap(data_, size_);
  }
  std::span<const uint8_t> bytes() const override { return {static_cast<const uint8_t*>(data_), size_}; }

 private:
  void* data_;
  size_t size_;
};

class PosixRandomAccessFile final : public RandomAccessFile {
 public:
  PosixRandomAccessFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~PosixRandomAccessFile() override { ::close(fd_); }

  Result<size_t> ReadAt(uint64_t position, std::span<uint8_t> dest) override {
    size_t done = 0;
    while (done < dest.size()) {
      const ssize_t n = RetryOnEintr([&] {
        return ::pread(fd_, dest.data() + done, dest.size() - done, static_cast<off_t>(position + done));
      });
      if (n < 0) return Status::FromErrno(errno, "read", path_);
      if (n == 0) break;
      done += static_cast<size_t>(n);
    }
    return done;
  }

  Result<uint64_t> Size() override {
    struct stat st;
    if (::fstat(fd_, &st) != 0) return Status::FromErrno(errno, "fstat", path_);
    return static_cast<uint64_t>(st.st_size);
  }

  Result<std::unique_ptr<MappedFile>> MapReadOnly() override {
    TF_ASSIGN_OR_RETURN(uint64_t size, Size());
    if (size == 0) return std::unique_ptr<MappedFile>(new PosixMappedFile(nullptr, 0));
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd_, 0);
    if (p == MAP_FAILED) return Status::FromErrno(errno, "mmap", path_);
    // Reads go front to back: ask for aggressive read-ahead, and let the
    // pages age out of the cache soon after they were read.
    (void)::madvise(p, size, MADV_SEQUENTIAL);
    return std::unique_ptr<MappedFile>(new PosixMappedFile(p, size));
  }

  const std::string& path() const override { return path_; }

 private:
  std::string path_;
  int fd_;
};

class PosixFileLock final : public FileLock {
 public:
  explicit PosixFileLock(int fd) : fd_(fd) {}
  ~PosixFileLock() override { ::close(fd_); }  // closing the descriptor drops the flock

 private:
  int fd_;
};

class PosixFileSystem final : public FileSystem {
 public:
  Result<std::unique_ptr<WritableFile>> OpenWritable(const std::string& path, WriteMode mode) override {
    int flags = O_WRONLY | O_CLOEXEC | O_NOFOLLOW;
    switch (mode) {
      case WriteMode::kCreateNew: flags |= O_CREAT | O_EXCL; break;
      case WriteMode::kTruncate: flags |= O_CREAT | O_TRUNC; break;
      case WriteMode::kAppend: break;
    }
    const int fd = RetryOnEintr([&] { return ::open(path.c_str(), flags, 0644); });
    if (fd < 0) return OpenError(errno, "open for writing", path);
    uint64_t size = 0;
    if (mode == WriteMode::kAppend) {
      struct stat st;
      if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        return Status::FromErrno(err, "fstat", path);
      }
      size = static_cast<uint64_t>(st.st_size);
    }
    return std::unique_ptr<WritableFile>(new PosixWritableFile(path, fd, size));
  }

  Result<std::unique_ptr<RandomAccessFile>> OpenReadable(const std::string& path) override {
    const int fd = RetryOnEintr([&] { return ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW); });
    if (fd < 0) return OpenError(errno, "open for reading", path);
    return std::unique_ptr<RandomAccessFile>(new PosixRandomAccessFile(path, fd));
  }

  Result<FileInfo> Stat(const std::string& path) override {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) return Status::FromErrno(errno, "stat", path);
    if (!S_ISLNK(st.st_mode)) return FileInfo{static_cast<uint64_t>(st.st_size), S_ISDIR(st.st_mode), false};
    // A link: what it points to, if anything (a dangling link is an empty file).
    struct stat target;
    if (::stat(path.c_str(), &target) != 0) return FileInfo{0, false, true};
    return FileInfo{static_cast<uint64_t>(target.st_size), S_ISDIR(target.st_mode), true};
  }

  Result<std::vector<std::string>> ListDir(const std::string& path) override {
    DIR* dir = ::opendir(path.c_str());
    if (dir == nullptr) return Status::FromErrno(errno, "list directory", path);
    std::vector<std::string> names;
    errno = 0;
    while (struct dirent* e = ::readdir(dir)) {
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.emplace_back(e->d_name);
    }
    const int err = errno;
    ::closedir(dir);
    if (err != 0) return Status::FromErrno(err, "list directory", path);
    std::sort(names.begin(), names.end());
    return names;
  }

  Status CreateDir(const std::string& path) override {
    if (::mkdir(path.c_str(), 0755) != 0) return Status::FromErrno(errno, "create directory", path);
    return Status::OK();
  }

  Status RemoveFile(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return Status::FromErrno(errno, "remove file", path);
    return Status::OK();
  }

  Status RemoveDir(const std::string& path) override {
    if (::rmdir(path.c_str()) != 0) return Status::FromErrno(errno, "remove directory", path);
    return Status::OK();
  }

  Status Rename(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) {
      const int err = errno;
      return Status::FromErrno(err, "rename", from + "' to '" + to);
    }
    return Status::OK();
  }

  Status SyncDir(const std::string& path) override {
    const int fd = RetryOnEintr([&] { return ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); });
    if (fd < 0) return Status::FromErrno(errno, "open directory", path);
    const int rc = RetryOnEintr([&] { return ::fsync(fd); });
    const int err = errno;
    ::close(fd);
    if (rc != 0) return Status::FromErrno(err, "fsync directory", path);
    return Status::OK();
  }

  Result<std::unique_ptr<FileLock>> LockFile(const std::string& path, std::string_view holder) override {
    const int fd = RetryOnEintr([&] { return ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644); });
    if (fd < 0) return OpenError(errno, "open lock file", path);
    // flock locks belong to the open file description, so a second open of
    // the same file conflicts even inside this process (fcntl locks would
    // not), and the kernel drops them when the holder dies.
    if (RetryOnEintr([&] { return ::flock(fd, LOCK_EX | LOCK_NB); }) != 0) {
      const int err = errno;
      std::string current;
      if (err == EWOULDBLOCK) {
        char buf[256];
        const ssize_t n = ::pread(fd, buf, sizeof(buf), 0);
        if (n > 0) current.assign(buf, static_cast<size_t>(n));
        while (!current.empty() && (current.back() == '\n' || current.back() == '\0')) current.pop_back();
      }
      ::close(fd);
      if (err != EWOULDBLOCK) return Status::FromErrno(err, "lock", path);
      return Status::Busy("'" + path + "' is locked by " + (current.empty() ? "another process" : current));
    }
    // The holder text only helps the next one to understand a Busy error;
    // the lock itself is the flock, so failing to write it is harmless.
    if (::ftruncate(fd, 0) == 0) {
      std::string text(holder);
      text.push_back('\n');
      [[maybe_unused]] const ssize_t n = ::pwrite(fd, text.data(), text.size(), 0);
    }
    return std::unique_ptr<FileLock>(new PosixFileLock(fd));
  }
};

}  // namespace

FileSystem* FileSystem::Posix() {
  static PosixFileSystem* const fs = new PosixFileSystem();  // never destroyed: usable in static destructors
  return fs;
}

std::string JoinPath(std::string_view dir, std::string_view name) {
  std::string p(dir);
  if (!p.empty() && p.back() != '/') p.push_back('/');
  p.append(name);
  return p;
}

std::string ParentDir(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  const size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return ".";
  // "a//b" is in "a": a run of slashes separates like one.
  std::string_view parent = path.substr(0, slash);
  while (!parent.empty() && parent.back() == '/') parent.remove_suffix(1);
  if (parent.empty()) return "/";
  return std::string(parent);
}

std::string BaseName(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  const size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

Status CreateDirs(FileSystem* fs, const std::string& path) {
  Result<FileInfo> info = fs->Stat(path);
  if (info.ok()) {
    if (!info->is_directory) return Status::AlreadyExists("'" + path + "' exists and is not a directory");
    return Status::OK();
  }
  if (!info.status().IsNotFound()) return info.status();
  const std::string parent = ParentDir(path);
  if (parent != path) TF_RETURN_IF_ERROR(CreateDirs(fs, parent));
  Status s = fs->CreateDir(path);
  if (s.code() == StatusCode::kAlreadyExists) return Status::OK();  // made by someone else meanwhile
  TF_RETURN_IF_ERROR(s);
  return fs->SyncDir(parent);
}

Status WriteFileAtomically(FileSystem* fs, const std::string& path, std::string_view contents) {
  static std::atomic<uint64_t> counter{0};
  const std::string temp =
      path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
  {
    TF_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, fs->OpenWritable(temp, FileSystem::WriteMode::kCreateNew));
    Status s = file->Append({reinterpret_cast<const uint8_t*>(contents.data()), contents.size()});
    if (s.ok()) s = file->Sync();
    if (s.ok()) s = file->Close();
    if (!s.ok()) {
      file.reset();
      (void)fs->RemoveFile(temp);
      return s;
    }
  }
  Status s = fs->Rename(temp, path);
  if (!s.ok()) {
    (void)fs->RemoveFile(temp);
    return s;
  }
  return fs->SyncDir(ParentDir(path));
}

Result<std::string> ReadFileToString(FileSystem* fs, const std::string& path) {
  TF_ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> file, fs->OpenReadable(path));
  TF_ASSIGN_OR_RETURN(uint64_t size, file->Size());
  std::string out(size, '\0');
  TF_ASSIGN_OR_RETURN(size_t n, file->ReadAt(0, {reinterpret_cast<uint8_t*>(out.data()), out.size()}));
  out.resize(n);
  return out;
}

Status RemoveTree(FileSystem* fs, const std::string& path) {
  TF_ASSIGN_OR_RETURN(FileInfo info, fs->Stat(path));
  // A link is removed itself, never what it points to: a link inside a topic
  // must not empty a directory elsewhere.
  if (!info.is_directory || info.is_symlink) return fs->RemoveFile(path);
  TF_ASSIGN_OR_RETURN(std::vector<std::string> names, fs->ListDir(path));
  for (const std::string& name : names) TF_RETURN_IF_ERROR(RemoveTree(fs, JoinPath(path, name)));
  return fs->RemoveDir(path);
}

}  // namespace tokenfeed
