// Test fixtures for the text component: a temporary directory removed at the
// end of the test, files written plain, gzip- or zstd-compressed through
// zlib and libzstd (so tests never need the command-line tools), and a
// ByteSource read to its end.
// Test-only code; not part of tokenfeed_text. Not thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "text/byte_source.h"

namespace tokenfeed::text::testing {

// Reads `source` to its end, `piece` bytes at a time, appending to *out; the
// Status of the first error.
inline Status ReadAll(ByteSource* source, size_t piece, std::string* out) {
  std::string buf(piece, '\0');
  for (;;) {
    Result<size_t> n = source->Read(buf.data(), buf.size());
    if (!n.ok()) return n.status();
    if (*n == 0) return Status::OK();
    out->append(buf.data(), *n);
  }
}

class TempDir {
 public:
  TempDir();  // under $TMPDIR (or /tmp); aborts the test program if it cannot
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // path()/relative; parent directories are created.
  std::string Path(std::string_view relative) const;
  // Writes `bytes` to path()/relative and returns the full path.
  std::string Write(std::string_view relative, std::string_view bytes) const;
  // The same bytes compressed (level 3, `members` gzip members or zstd frames).
  std::string WriteGzip(std::string_view relative, std::string_view bytes, int members = 1) const;
  std::string WriteZstd(std::string_view relative, std::string_view bytes, int frames = 1) const;

 private:
  std::string path_;
};

std::string GzipCompress(std::string_view bytes, int members = 1);
std::string ZstdCompress(std::string_view bytes, int frames = 1);

// Cuts a file to `size` bytes.
void TruncateFile(const std::string& path, size_t size);
size_t FileSize(const std::string& path);

}  // namespace tokenfeed::text::testing
