// ByteSource: the uncompressed bytes of one corpus file, read front to back:
// a local file, or an object in S3 ("s3://bucket/key", object_store.h) read by
// ranged requests of at most 8 MiB (one chunk held at a time; a seek in a
// plain object is a ranged read at the new offset).
// gzip (also multi-member) and zstd (also multi-frame) are recognised by the
// file's first bytes, not by its name, and decompressed as a stream through
// fixed buffers. It is not the log's file-system seam and never writes.
// A truncated or damaged stream is a Corruption error that names the file and
// the uncompressed offset reached. Not thread-safe; may move between threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "tokenfeed/status.h"

namespace tokenfeed::text {

class ObjectReader;

enum class Compression : uint8_t { kNone, kGzip, kZstd };

// "none", "gzip", "zstd".
std::string_view CompressionName(Compression compression);

// The compression a name claims by its suffix (".gz", ".zst", ".zstd"), and
// the name with that suffix removed (used to find the format extension).
Compression CompressionFromName(std::string_view path);
std::string_view StripCompressionSuffix(std::string_view path);

class ByteSource {
 public:
  // Opens a regular file or an "s3://" object. NotFound when it does not
  // exist; IoError when it cannot be opened or is not a regular file;
  // Unsupported for an object in a build without S3 support; Corruption when its name ends
  // in .gz / .zst but its first bytes are not that format's magic (an empty
  // .gz is a truncated file, not an empty corpus).
  static Result<std::unique_ptr<ByteSource>> Open(const std::string& path);
  // Reads an object already opened (ByteSource::Open opens "s3://" URIs
  // through OpenObject; tests give an ObjectReader of their own), named by
  // its URI. Errors as for Open.
  static Result<std::unique_ptr<ByteSource>> FromObject(std::unique_ptr<ObjectReader> object);
  // The process's standard input, uncompressed; named "<stdin>" in errors.
  static std::unique_ptr<ByteSource> OpenStandardInput();

  virtual ~ByteSource() = default;
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;

  // Reads up to `n` (> 0) uncompressed bytes into `dst`. 0 means the stream
  // ended completely; a stream cut short is an error, never a quiet 0.
  virtual Result<size_t> Read(char* dst, size_t n) = 0;

  // Only uncompressed files (and objects) can seek; compressed ones are
  // skipped by reading.
  virtual bool can_seek() const { return false; }
  // Moves to uncompressed offset `offset` (plain files only).
  virtual Status SeekTo(uint64_t offset);

  // Uncompressed bytes read (or sought past) so far.
  uint64_t offset() const { return offset_; }
  Compression compression() const { return compression_; }
  const std::string& path() const { return path_; }

 protected:
  ByteSource(std::string path, Compression compression) : path_(std::move(path)), compression_(compression) {}

  std::string path_;
  Compression compression_;
  uint64_t offset_ = 0;
};

}  // namespace tokenfeed::text
