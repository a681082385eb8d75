#include "text/byte_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "text/object_store.h"
#include "text/s3_uri.h"

namespace tokenfeed::text {
namespace {

// Compressed input is read in pieces of this size; it bounds the memory of a
// decompressing source together with the codec's own state (zstd's window).
constexpr size_t kCompressedBlockBytes = 256 * 1024;
// An object in S3 is read by ranged requests that start at
// kFirstObjectChunkBytes and double up to kObjectChunkBytes: a look at an
// object's start (its magic, the binary-input check) fetches little, a long
// read makes few requests, and a reader holds one chunk of memory.
constexpr size_t kFirstObjectChunkBytes = 1024 * 1024;
constexpr size_t kObjectChunkBytes = 8 * 1024 * 1024;

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

// Where a source's stored bytes (compressed or not) come from, by offset:
// a local file, or an object in S3.
class RawInput {
 public:
  virtual ~RawInput() = default;
  // Up to `n` bytes at `at`; fewer only at the end, 0 at or past it.
  virtual Result<size_t> ReadAt(uint64_t at, char* dst, size_t n) = 0;
};

// pread(2) that retries on EINTR.
class LocalFileInput final : public RawInput {
 public:
  LocalFileInput(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}

  Result<size_t> ReadAt(uint64_t at, char* dst, size_t n) override {
    size_t got = 0;
    while (got < n) {
      ssize_t r = ::pread(fd_.get(), dst + got, n - got, static_cast<off_t>(at + got));
      if (r < 0) {
        if (errno == EINTR) continue;
        return Status::FromErrno(errno, "read", path_).WithContext("at byte offset " + std::to_string(at + got));
      }
      if (r == 0) break;
      got += static_cast<size_t>(r);
    }
    return got;
  }

 private:
  FileDescriptor fd_;
  std::string path_;
};

// An object read front to back in ranged requests (kFirstObjectChunkBytes
// doubling to kObjectChunkBytes); a read the chunk does not hold fetches the
// chunk that starts there (a seek costs one request). After a failed or
// short request, and once the object's last byte is fetched, it asks
// whether the object is still the version opened.
class ObjectChunkInput final : public RawInput {
 public:
  explicit ObjectChunkInput(std::unique_ptr<ObjectReader> reader) : reader_(std::move(reader)) {}

  Result<size_t> ReadAt(uint64_t at, char* dst, size_t n) override {
    size_t got = 0;
    while (got < n) {
      const uint64_t want = at + got;
      if (want >= reader_->size()) break;
      if (want < chunk_at_ || want >= chunk_at_ + chunk_len_) {
        const auto size = static_cast<size_t>(std::min<uint64_t>(next_chunk_, reader_->size() - want));
        next_chunk_ = std::min(next_chunk_ * 2, kObjectChunkBytes);
        if (chunk_.size() < size) chunk_.resize(size);
        Result<size_t> read = reader_->ReadAt(want, chunk_.data(), size);
        if (!read.ok()) {
          // A shorter object answers a range past its new end with an error.
          TF_RETURN_IF_ERROR(reader_->CheckUnchanged());
          return read.status();
        }
        const size_t fetched = *read;
        if (fetched == 0) {
          TF_RETURN_IF_ERROR(reader_->CheckUnchanged());
          return Status::IoError("'" + reader_->uri() + "': the object ended at byte offset " +
                                 std::to_string(want) + " but its size is " + std::to_string(reader_->size()) +
                                 "; it changed while being read: read it again");
        }
        if (want + fetched >= reader_->size() && !end_checked_) {
          end_checked_ = true;
          TF_RETURN_IF_ERROR(reader_->CheckUnchanged());
        }
        chunk_at_ = want;
        chunk_len_ = fetched;
      }
      const size_t from = static_cast<size_t>(want - chunk_at_);
      const size_t take = std::min(n - got, chunk_len_ - from);
      std::memcpy(dst + got, chunk_.data() + from, take);
      got += take;
    }
    return got;
  }

 private:
  std::unique_ptr<ObjectReader> reader_;
  std::vector<char> chunk_;
  uint64_t chunk_at_ = 0;
  size_t chunk_len_ = 0;
  size_t next_chunk_ = kFirstObjectChunkBytes;
  bool end_checked_ = false;
};

// read(2) that retries on EINTR; short counts only at the end of the file.
Result<size_t> ReadFully(int fd, char* dst, size_t n, const std::string& path, uint64_t at) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::read(fd, dst + got, n - got);
    if (r < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(errno, "read", path).WithContext("at byte offset " + std::to_string(at + got));
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return got;
}

std::string TruncatedMessage(const std::string& path, std::string_view format, uint64_t uncompressed,
                             uint64_t compressed) {
  return "'" + path + "': the " + std::string(format) + " stream is truncated: the file ends after " +
         std::to_string(compressed) + " compressed bytes, before the end of the compressed data, at uncompressed " +
         "byte offset " + std::to_string(uncompressed) +
         ". The file is incomplete: documents that ended before that offset were delivered, the rest is lost. "
         "Copy or compress the file again.";
}

class PlainSource final : public ByteSource {
 public:
  PlainSource(std::string path, std::unique_ptr<RawInput> input)
      : ByteSource(std::move(path), Compression::kNone), input_(std::move(input)) {}

  Result<size_t> Read(char* dst, size_t n) override {
    TF_ASSIGN_OR_RETURN(size_t got, input_->ReadAt(offset_, dst, n));
    offset_ += got;
    return got;
  }
  bool can_seek() const override { return true; }
  Status SeekTo(uint64_t offset) override {
    offset_ = offset;
    return Status::OK();
  }

 private:
  std::unique_ptr<RawInput> input_;
};

// Shared by the two decompressors: the compressed input, read in blocks.
class CompressedInput {
 public:
  explicit CompressedInput(std::unique_ptr<RawInput> input)
      : input_(std::move(input)), buffer_(kCompressedBlockBytes) {}

  // Refills when everything has been consumed; sets eof() at the end.
  Status Refill() {
    TF_ASSIGN_OR_RETURN(size_t got, input_->ReadAt(consumed_total_, buffer_.data(), buffer_.size()));
    size_ = got;
    pos_ = 0;
    if (got == 0) eof_ = true;
    return Status::OK();
  }
  const char* data() const { return buffer_.data() + pos_; }
  size_t available() const { return size_ - pos_; }
  void Consume(size_t n) {
    pos_ += n;
    consumed_total_ += n;
  }
  bool eof() const { return eof_; }
  uint64_t consumed_total() const { return consumed_total_; }

 private:
  std::unique_ptr<RawInput> input_;
  std::vector<char> buffer_;
  size_t size_ = 0;
  size_t pos_ = 0;
  bool eof_ = false;
  uint64_t consumed_total_ = 0;
};

// The process's standard input, read as it comes (a pipe cannot seek), never
// closed here.
class StandardInputSource final : public ByteSource {
 public:
  StandardInputSource() : ByteSource("<stdin>", Compression::kNone) {}

  Result<size_t> Read(char* dst, size_t n) override {
    TF_ASSIGN_OR_RETURN(size_t got, ReadFully(STDIN_FILENO, dst, n, path_, offset_));
    offset_ += got;
    return got;
  }
};

class GzipSource final : public ByteSource {
 public:
  GzipSource(std::string path, std::unique_ptr<RawInput> input)
      : ByteSource(std::move(path), Compression::kGzip), input_(std::move(input)) {}
  ~GzipSource() override {
    if (initialised_) inflateEnd(&stream_);
  }

  Status Init() {
    std::memset(&stream_, 0, sizeof(stream_));
    // 16 + 15: gzip wrapper only, 32 KiB window (the largest gzip uses).
    if (inflateInit2(&stream_, 16 + MAX_WBITS) != Z_OK) {
      return Status::ResourceExhausted("cannot start gzip decompression of '" + path_ + "': out of memory");
    }
    initialised_ = true;
    return Status::OK();
  }

  Result<size_t> Read(char* dst, size_t n) override {
    if (finished_) return size_t{0};
    stream_.next_out = reinterpret_cast<Bytef*>(dst);
    // zlib counts in uInt; a smaller piece is fine, the caller reads again.
    stream_.avail_out = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    const uInt out_start = stream_.avail_out;
    while (stream_.avail_out == out_start) {
      if (input_.available() == 0 && !input_.eof()) TF_RETURN_IF_ERROR(input_.Refill());
      if (input_.available() == 0 && input_.eof()) {
        if (member_ended_) {
          finished_ = true;
          return size_t{0};
        }
        return Status::Corruption(TruncatedMessage(path_, "gzip", offset_, input_.consumed_total()));
      }
      if (member_ended_) {
        // Another member follows (files joined with cat are valid gzip).
        inflateReset(&stream_);
        member_ended_ = false;
        member_start_ = input_.consumed_total();
      }
      stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input_.data()));
      stream_.avail_in = static_cast<uInt>(input_.available());
      const uInt in_start = stream_.avail_in;
      int rc = inflate(&stream_, Z_NO_FLUSH);
      input_.Consume(in_start - stream_.avail_in);
      if (rc == Z_STREAM_END) {
        member_ended_ = true;
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        std::string what = stream_.msg ? stream_.msg : "error " + std::to_string(rc);
        bool after_member = member_start_ > 0 && input_.consumed_total() - member_start_ <= 10;
        offset_ += out_start - stream_.avail_out;
        return Status::Corruption("'" + path_ + "': " +
                                  (after_member ? "bytes after the end of the gzip data are not a gzip member ("
                                                : "damaged gzip data (") +
                                  what + ") at uncompressed byte offset " + std::to_string(offset_) +
                                  ", compressed offset " + std::to_string(input_.consumed_total()) +
                                  ". Documents before that offset were delivered; copy or compress the file again.");
      }
    }
    size_t produced = out_start - stream_.avail_out;
    offset_ += produced;
    return produced;
  }

 private:
  CompressedInput input_;
  z_stream stream_;
  bool initialised_ = false;
  bool member_ended_ = false;
  bool finished_ = false;
  uint64_t member_start_ = 0;
};

class ZstdSource final : public ByteSource {
 public:
  ZstdSource(std::string path, std::unique_ptr<RawInput> input)
      : ByteSource(std::move(path), Compression::kZstd), input_(std::move(input)) {}
  ~ZstdSource() override { ZSTD_freeDCtx(dctx_); }

  Status Init() {
    dctx_ = ZSTD_createDCtx();
    if (dctx_ == nullptr) {
      return Status::ResourceExhausted("cannot start zstd decompression of '" + path_ + "': out of memory");
    }
    return Status::OK();
  }

  Result<size_t> Read(char* dst, size_t n) override {
    ZSTD_outBuffer out{dst, n, 0};
    for (;;) {
      if (input_.available() == 0 && !input_.eof()) TF_RETURN_IF_ERROR(input_.Refill());
      if (input_.available() == 0 && input_.eof() && !frame_open_) break;
      ZSTD_inBuffer in{input_.data(), input_.available(), 0};
      size_t rc = ZSTD_decompressStream(dctx_, &out, &in);
      input_.Consume(in.pos);
      if (ZSTD_isError(rc)) {
        offset_ += out.pos;
        return Status::Corruption("'" + path_ + "': damaged zstd data (" + ZSTD_getErrorName(rc) +
                                  ") at uncompressed byte offset " + std::to_string(offset_) +
                                  ", compressed offset " + std::to_string(input_.consumed_total()) +
                                  ". Documents before that offset were delivered; copy or compress the file again.");
      }
      // 0 means a frame is complete and fully flushed; anything else means
      // the decoder holds or expects more of the current frame.
      frame_open_ = rc != 0;
      if (out.pos > 0) break;
      if (input_.available() == 0 && input_.eof() && frame_open_) {
        return Status::Corruption(TruncatedMessage(path_, "zstd", offset_, input_.consumed_total()));
      }
    }
    offset_ += out.pos;
    return out.pos;
  }

 private:
  CompressedInput input_;
  ZSTD_DCtx* dctx_ = nullptr;
  // The magic was seen, so a frame has begun and must end before the file does.
  bool frame_open_ = true;
};

Compression CompressionFromMagic(const unsigned char* b, size_t n) {
  if (n >= 2 && b[0] == 0x1F && b[1] == 0x8B) return Compression::kGzip;
  if (n >= 4 && b[0] == 0x28 && b[1] == 0xB5 && b[2] == 0x2F && b[3] == 0xFD) return Compression::kZstd;
  // zstd skippable frames: 0x184D2A50..5F little-endian.
  if (n >= 4 && (b[0] & 0xF0) == 0x50 && b[1] == 0x2A && b[2] == 0x4D && b[3] == 0x18) return Compression::kZstd;
  return Compression::kNone;
}

// The source over `input`, local file or object alike: its first bytes
// choose the decompressor, and must agree with a compressed name.
Result<std::unique_ptr<ByteSource>> OpenStored(const std::string& path, std::unique_ptr<RawInput> input) {
  unsigned char magic[4];
  TF_ASSIGN_OR_RETURN(size_t got, input->ReadAt(0, reinterpret_cast<char*>(magic), sizeof(magic)));
  Compression by_magic = CompressionFromMagic(magic, got);
  Compression by_name = CompressionFromName(path);
  if (by_name != Compression::kNone && by_magic == Compression::kNone) {
    return Status::Corruption("'" + path + "' is named like a " + std::string(CompressionName(by_name)) +
                              " file but " + (got == 0 ? "is empty" : "does not start with its magic bytes") +
                              "; the file is truncated or misnamed: compress it again or rename it");
  }
  switch (by_magic) {
    case Compression::kNone: return std::unique_ptr<ByteSource>(new PlainSource(path, std::move(input)));
    case Compression::kGzip: {
      auto source = std::make_unique<GzipSource>(path, std::move(input));
      TF_RETURN_IF_ERROR(source->Init());
      return std::unique_ptr<ByteSource>(std::move(source));
    }
    case Compression::kZstd: {
      auto source = std::make_unique<ZstdSource>(path, std::move(input));
      TF_RETURN_IF_ERROR(source->Init());
      return std::unique_ptr<ByteSource>(std::move(source));
    }
  }
  return Status::Internal("unknown compression for '" + path + "'");
}

}  // namespace

std::string_view CompressionName(Compression compression) {
  switch (compression) {
    case Compression::kNone: return "none";
    case Compression::kGzip: return "gzip";
    case Compression::kZstd: return "zstd";
  }
  return "unknown";
}

Compression CompressionFromName(std::string_view path) {
  if (EndsWith(path, ".gz")) return Compression::kGzip;
  if (EndsWith(path, ".zst") || EndsWith(path, ".zstd")) return Compression::kZstd;
  return Compression::kNone;
}

std::string_view StripCompressionSuffix(std::string_view path) {
  for (std::string_view suffix : {".gz", ".zst", ".zstd"}) {
    if (EndsWith(path, suffix)) return path.substr(0, path.size() - suffix.size());
  }
  return path;
}

Status ByteSource::SeekTo(uint64_t offset) {
  return Status::Unsupported("cannot seek in compressed input '" + path_ + "' to byte offset " +
                             std::to_string(offset) + "; compressed files are skipped by reading");
}

std::unique_ptr<ByteSource> ByteSource::OpenStandardInput() { return std::make_unique<StandardInputSource>(); }

Result<std::unique_ptr<ByteSource>> ByteSource::FromObject(std::unique_ptr<ObjectReader> object) {
  std::string uri = object->uri();
  return OpenStored(uri, std::make_unique<ObjectChunkInput>(std::move(object)));
}

Result<std::unique_ptr<ByteSource>> ByteSource::Open(const std::string& path) {
  if (IsS3Uri(path)) {
    TF_ASSIGN_OR_RETURN(std::unique_ptr<ObjectReader> reader, OpenObject(path));
    return FromObject(std::move(reader));
  }
  int raw = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (raw < 0) {
    Status s = Status::FromErrno(errno, "cannot open input", path);
    return Status(s.code(), s.message() + "; check that the file exists and is readable");
  }
  FileDescriptor fd(raw);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Status::FromErrno(errno, "cannot stat input", path);
  if (!S_ISREG(st.st_mode)) {
    return Status::IoError("cannot read input '" + path + "': " +
                           (S_ISDIR(st.st_mode) ? "it is a directory" : "it is not a regular file") +
                           "; give a regular file, or a directory or glob to read the files inside it");
  }
#ifdef POSIX_FADV_SEQUENTIAL
  (void)::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  return OpenStored(path, std::make_unique<LocalFileInput>(fd.release(), path));
}

}  // namespace tokenfeed::text
