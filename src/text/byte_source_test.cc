#include "text/byte_source.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>

#include "text/text_test_files.h"

namespace tokenfeed::text {
namespace {

using testing::ReadAll;

using testing::TempDir;

std::string Sample(size_t lines) {
  std::string s;
  for (size_t i = 0; i < lines; ++i) s += "{\"text\":\"line " + std::to_string(i * 7919 % 1000003) + "\"}\n";
  return s;
}


TEST(ByteSourceTest, PlainGzipAndZstdGiveTheSameBytes) {
  TempDir dir;
  std::string data = Sample(5000);
  struct Case {
    std::string path;
    Compression compression;
  } cases[] = {
      {dir.Write("a.jsonl", data), Compression::kNone},
      {dir.WriteGzip("a.jsonl.gz", data), Compression::kGzip},
      {dir.WriteGzip("multi.jsonl.gz", data, 3), Compression::kGzip},
      {dir.WriteZstd("a.jsonl.zst", data), Compression::kZstd},
      {dir.WriteZstd("multi.jsonl.zst", data, 4), Compression::kZstd},
  };
  for (const Case& c : cases) {
    for (size_t piece : {size_t{1}, size_t{7}, size_t{4096}, size_t{1} << 20}) {
      if (piece == 1 && c.compression == Compression::kNone) continue;  // byte-wise plain reads are just slow
      auto source = ByteSource::Open(c.path);
      ASSERT_TRUE(source.ok()) << source.status().ToString();
      EXPECT_EQ((*source)->compression(), c.compression) << c.path;
      std::string got;
      ASSERT_TRUE(ReadAll(source->get(), piece, &got).ok()) << c.path;
      EXPECT_EQ(got, data) << c.path << " piece " << piece;
      EXPECT_EQ((*source)->offset(), data.size());
    }
  }
}

TEST(ByteSourceTest, CompressionIsFoundByMagicNotByName) {
  TempDir dir;
  std::string data = Sample(100);
  auto gz = ByteSource::Open(dir.WriteGzip("really_gzip.txt", data));
  ASSERT_TRUE(gz.ok());
  EXPECT_EQ((*gz)->compression(), Compression::kGzip);
  auto zst = ByteSource::Open(dir.WriteZstd("really_zstd.gz.bin", data));
  ASSERT_TRUE(zst.ok());
  EXPECT_EQ((*zst)->compression(), Compression::kZstd);
  std::string got;
  ASSERT_TRUE(ReadAll(zst->get(), 4096, &got).ok());
  EXPECT_EQ(got, data);
}

TEST(ByteSourceTest, CompressedNameWithoutMagicIsAnError) {
  TempDir dir;
  for (const char* name : {"plain.jsonl.gz", "plain.jsonl.zst"}) {
    auto source = ByteSource::Open(dir.Write(name, "{\"text\":\"x\"}\n"));
    ASSERT_FALSE(source.ok());
    EXPECT_TRUE(source.status().IsCorruption());
    EXPECT_NE(source.status().message().find(name), std::string::npos) << source.status().ToString();
  }
  auto empty = ByteSource::Open(dir.Write("empty.gz", ""));
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("is empty"), std::string::npos) << empty.status().ToString();
}

TEST(ByteSourceTest, EmptyPlainFileReadsAsNothing) {
  TempDir dir;
  auto source = ByteSource::Open(dir.Write("empty.txt", ""));
  ASSERT_TRUE(source.ok());
  std::string got;
  EXPECT_TRUE(ReadAll(source->get(), 64, &got).ok());
  EXPECT_TRUE(got.empty());
}

void ExpectTruncationReported(const std::string& path, const std::string& original, std::string_view format) {
  auto source = ByteSource::Open(path);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  std::string got;
  Status s = ReadAll(source->get(), 1000, &got);
  ASSERT_FALSE(s.ok()) << path << " read to the end without noticing the truncation";
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find(path), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find(std::string(format) + " stream is truncated"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("uncompressed byte offset " + std::to_string(got.size())), std::string::npos)
      << s.ToString();
  // What came out before the error is exactly the start of the original.
  EXPECT_EQ(got, original.substr(0, got.size()));
}

TEST(ByteSourceTest, TruncatedGzipIsReportedWithTheOffsetReached) {
  TempDir dir;
  std::string data = Sample(20000);
  std::string full = testing::GzipCompress(data);
  for (size_t cut : {size_t{3}, size_t{12}, full.size() / 3, full.size() / 2, full.size() - 9, full.size() - 1}) {
    std::string path = dir.Write("cut" + std::to_string(cut) + ".jsonl.gz", full.substr(0, cut));
    ExpectTruncationReported(path, data, "gzip");
  }
}

TEST(ByteSourceTest, TruncatedZstdIsReportedWithTheOffsetReached) {
  TempDir dir;
  std::string data = Sample(20000);
  std::string full = testing::ZstdCompress(data);
  for (size_t cut : {size_t{5}, size_t{40}, full.size() / 3, full.size() / 2, full.size() - 1}) {
    std::string path = dir.Write("cut" + std::to_string(cut) + ".jsonl.zst", full.substr(0, cut));
    ExpectTruncationReported(path, data, "zstd");
  }
}

TEST(ByteSourceTest, GarbageAfterTheCompressedDataIsAnError) {
  TempDir dir;
  std::string data = Sample(100);
  for (bool zstd : {false, true}) {
    std::string bytes = (zstd ? testing::ZstdCompress(data) : testing::GzipCompress(data)) + "trailing junk";
    auto source = ByteSource::Open(dir.Write(zstd ? "junk.zst" : "junk.gz", bytes));
    ASSERT_TRUE(source.ok());
    std::string got;
    Status s = ReadAll(source->get(), 4096, &got);
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_EQ(got, data);
  }
}

TEST(ByteSourceTest, MissingFileIsNotFound) {
  TempDir dir;
  auto source = ByteSource::Open(dir.Path("nope.jsonl"));
  ASSERT_FALSE(source.ok());
  EXPECT_TRUE(source.status().IsNotFound());
  EXPECT_NE(source.status().message().find("nope.jsonl"), std::string::npos);
}

TEST(ByteSourceTest, DirectoryIsNotReadAsAFile) {
  TempDir dir;
  dir.Write("sub/a.txt", "x");
  auto source = ByteSource::Open(dir.Path("sub"));
  ASSERT_FALSE(source.ok());
  EXPECT_NE(source.status().message().find("is a directory"), std::string::npos) << source.status().ToString();
}

TEST(ByteSourceTest, UnreadableFileIsAnErrorNamingIt) {
  TempDir dir;
  std::string path = dir.Write("secret.jsonl", "{\"text\":\"x\"}\n");
  ASSERT_EQ(::chmod(path.c_str(), 0), 0);
  ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
  auto check = [&]() -> bool {
    auto source = ByteSource::Open(path);
    if (source.ok()) return false;
    return source.status().message().find("secret.jsonl") != std::string::npos &&
           source.status().message().find("Permission denied") != std::string::npos;
  };
  if (::geteuid() != 0) {
    EXPECT_TRUE(check());
    return;
  }
  // root reads any file whatever its mode, so check as an unprivileged user.
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(77);
    ::_exit(check() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) GTEST_SKIP() << "cannot drop root privileges here to test an unreadable file";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "an unreadable file was opened, or the error did not name it";
}

TEST(ByteSourceTest, PlainFilesSeek) {
  TempDir dir;
  auto source = ByteSource::Open(dir.Write("a.txt", "0123456789"));
  ASSERT_TRUE(source.ok());
  ASSERT_TRUE((*source)->can_seek());
  ASSERT_TRUE((*source)->SeekTo(4).ok());
  std::string got;
  ASSERT_TRUE(ReadAll(source->get(), 3, &got).ok());
  EXPECT_EQ(got, "456789");
  auto gz = ByteSource::Open(dir.WriteGzip("a.gz", "0123456789"));
  ASSERT_TRUE(gz.ok());
  EXPECT_FALSE((*gz)->can_seek());
  EXPECT_FALSE((*gz)->SeekTo(4).ok());
}

TEST(ByteSourceTest, SuffixHelpers) {
  EXPECT_EQ(CompressionFromName("a.jsonl.gz"), Compression::kGzip);
  EXPECT_EQ(CompressionFromName("a.zst"), Compression::kZstd);
  EXPECT_EQ(CompressionFromName("a.zstd"), Compression::kZstd);
  EXPECT_EQ(CompressionFromName("a.jsonl"), Compression::kNone);
  EXPECT_EQ(StripCompressionSuffix("dir/a.jsonl.zst"), "dir/a.jsonl");
  EXPECT_EQ(StripCompressionSuffix("a.txt"), "a.txt");
}

}  // namespace
}  // namespace tokenfeed::text
