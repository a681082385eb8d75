#include "text/text_test_files.h"

#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace tokenfeed::text::testing {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "test fixture: %s\n", what.c_str());
  std::abort();
}

// Splits `bytes` into `parts` nearly equal pieces, each compressed on its own.
template <typename Fn>
std::string CompressInParts(std::string_view bytes, int parts, Fn&& compress_one) {
  std::string out;
  size_t n = static_cast<size_t>(parts < 1 ? 1 : parts);
  size_t step = (bytes.size() + n - 1) / n;
  for (size_t i = 0; i < n; ++i) {
    size_t begin = std::min(bytes.size(), i * step);
    size_t end = std::min(bytes.size(), begin + step);
    out += compress_one(bytes.substr(begin, end - begin));
  }
  return out;
}

}  // namespace

std::string GzipCompress(std::string_view bytes, int members) {
  return CompressInParts(bytes, members, [](std::string_view piece) {
    z_stream s{};
    if (deflateInit2(&s, 3, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) Fail("deflateInit2");
    std::string out(deflateBound(&s, piece.size()) + 64, '\0');
    s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(piece.data()));
    s.avail_in = static_cast<uInt>(piece.size());
    s.next_out = reinterpret_cast<Bytef*>(out.data());
    s.avail_out = static_cast<uInt>(out.size());
    if (deflate(&s, Z_FINISH) != Z_STREAM_END) Fail("deflate");
    out.resize(s.total_out);
    deflateEnd(&s);
    return out;
  });
}

std::string ZstdCompress(std::string_view bytes, int frames) {
  return CompressInParts(bytes, frames, [](std::string_view piece) {
    std::string out(ZSTD_compressBound(piece.size()), '\0');
    size_t n = ZSTD_compress(out.data(), out.size(), piece.data(), piece.size(), 3);
    if (ZSTD_isError(n)) Fail(std::string("ZSTD_compress: ") + ZSTD_getErrorName(n));
    out.resize(n);
    return out;
  });
}

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/tokenfeed-text-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) Fail("mkdtemp " + pattern);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  // Tests may remove permissions; give them back so the tree can be removed.
  for (auto it = fs::recursive_directory_iterator(path_, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code perm_ec;
    fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, perm_ec);
  }
  fs::remove_all(path_, ec);
}

std::string TempDir::Path(std::string_view relative) const {
  fs::path p = fs::path(path_) / std::string(relative);
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  return p.string();
}

std::string TempDir::Write(std::string_view relative, std::string_view bytes) const {
  std::string p = Path(relative);
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) Fail("write " + p);
  return p;
}

std::string TempDir::WriteGzip(std::string_view relative, std::string_view bytes, int members) const {
  return Write(relative, GzipCompress(bytes, members));
}

std::string TempDir::WriteZstd(std::string_view relative, std::string_view bytes, int frames) const {
  return Write(relative, ZstdCompress(bytes, frames));
}

void TruncateFile(const std::string& path, size_t size) {
  if (::truncate(path.c_str(), static_cast<off_t>(size)) != 0) Fail("truncate " + path);
}

size_t FileSize(const std::string& path) {
  std::error_code ec;
  auto n = fs::file_size(path, ec);
  if (ec) Fail("file_size " + path);
  return static_cast<size_t>(n);
}

}  // namespace tokenfeed::text::testing
