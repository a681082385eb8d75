#include "base/file_system.h"

#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/scoped_temp_dir.h"

namespace tokenfeed {
namespace {

std::span<const uint8_t> Bytes(const std::string& s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

TEST(PathTest, JoinParentBase) {
  EXPECT_EQ(JoinPath("a/b", "c"), "a/b/c");
  EXPECT_EQ(JoinPath("a/b/", "c"), "a/b/c");
  EXPECT_EQ(ParentDir("a/b/c"), "a/b");
  EXPECT_EQ(ParentDir("c"), ".");
  EXPECT_EQ(ParentDir("/c"), "/");
  EXPECT_EQ(ParentDir("a/b/"), "a");
  EXPECT_EQ(ParentDir("a//b"), "a");  // a run of slashes separates like one
  EXPECT_EQ(ParentDir("//c"), "/");
  EXPECT_EQ(BaseName("a/b/c"), "c");
  EXPECT_EQ(BaseName("c"), "c");
}

TEST(PosixFileSystemTest, WriteAppendTruncateRead) {
  ScopedTempDir dir;
  FileSystem* fs = FileSystem::Posix();
  const std::string path = dir.Join("f");
  {
    auto w = fs->OpenWritable(path, FileSystem::WriteMode::kCreateNew);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    ASSERT_TRUE((*w)->Append(Bytes("hello world")).ok());
    EXPECT_EQ((*w)->Size(), 11u);
    ASSERT_TRUE((*w)->Truncate(5).ok());
    ASSERT_TRUE((*w)->Append(Bytes("!")).ok());
    ASSERT_TRUE((*w)->Sync().ok());
    ASSERT_TRUE((*w)->Close().ok());
  }
  EXPECT_EQ(fs->OpenWritable(path, FileSystem::WriteMode::kCreateNew).status().code(), StatusCode::kAlreadyExists);
  {
    auto w = fs->OpenWritable(path, FileSystem::WriteMode::kAppend);
    ASSERT_TRUE(w.ok());
    EXPECT_EQ((*w)->Size(), 6u);
    ASSERT_TRUE((*w)->Append(Bytes("?")).ok());
    EXPECT_FALSE((*w)->Truncate(100).ok()) << "Truncate must not grow a file";
  }
  auto contents = ReadFileToString(fs, path);
  ASSERT_TRUE(contents.ok());
  EXPECT_EQ(*contents, "hello!?");

  auto r = fs->OpenReadable(path);
  ASSERT_TRUE(r.ok());
  std::vector<uint8_t> buf(10);
  auto n = (*r)->ReadAt(3, buf);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 4u) << "a read past the end returns the bytes that exist";
  EXPECT_EQ(std::string(buf.begin(), buf.begin() + 4), "lo!?");
  EXPECT_EQ(*(*r)->Size(), 7u);
}

TEST(PosixFileSystemTest, MissingFilesAreNotFoundAndNamed) {
  ScopedTempDir dir;
  FileSystem* fs = FileSystem::Posix();
  const std::string path = dir.Join("nope");
  Status s = fs->OpenReadable(path).status();
  EXPECT_TRUE(s.IsNotFound());
  EXPECT_NE(s.message().find(path), std::string::npos) << s.ToString();
  EXPECT_TRUE(fs->Stat(path).status().IsNotFound());
  EXPECT_TRUE(fs->OpenWritable(path, FileSystem::WriteMode::kAppend).status().IsNotFound());
}

TEST(PosixFileSystemTest, DirectoriesListRenameRemove) {
  ScopedTempDir dir;
  FileSystem* fs = FileSystem::Posix();
  ASSERT_TRUE(CreateDirs(fs, dir.Join("x/y/z")).ok());
  ASSERT_TRUE(CreateDirs(fs, dir.Join("x/y/z")).ok()) << "CreateDirs of an existing directory is fine";
  EXPECT_EQ(fs->CreateDir(dir.Join("x")).code(), StatusCode::kAlreadyExists);
  ASSERT_TRUE(WriteFileAtomically(fs, dir.Join("x/b"), "B").ok());
  ASSERT_TRUE(WriteFileAtomically(fs, dir.Join("x/a"), "A").ok());
  ASSERT_TRUE(WriteFileAtomically(fs, dir.Join("x/a"), "A2").ok()) << "replaces";
  auto names = fs->ListDir(dir.Join("x"));
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, (std::vector<std::string>{"a", "b", "y"})) << "sorted, no temporary files left";
  EXPECT_EQ(*ReadFileToString(fs, dir.Join("x/a")), "A2");
  ASSERT_TRUE(fs->Rename(dir.Join("x/a"), dir.Join("x/c")).ok());
  EXPECT_TRUE(fs->Stat(dir.Join("x/a")).status().IsNotFound());
  EXPECT_TRUE(fs->Stat(dir.Join("x/y"))->is_directory);
  EXPECT_FALSE(fs->RemoveDir(dir.Join("x")).ok()) << "not empty";
  ASSERT_TRUE(RemoveTree(fs, dir.Join("x")).ok());
  EXPECT_TRUE(fs->Stat(dir.Join("x")).status().IsNotFound());
}

TEST(PosixFileSystemTest, SecondLockInSameProcessIsBusyAndNamesHolder) {
  ScopedTempDir dir;
  FileSystem* fs = FileSystem::Posix();
  const std::string path = dir.Join("LOCK");
  auto first = fs->LockFile(path, "pid 4242 on testhost");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = fs->LockFile(path, "pid 1 on other");
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kBusy);
  EXPECT_NE(second.status().message().find("pid 4242 on testhost"), std::string::npos) << second.status().ToString();
  first->reset();
  auto third = fs->LockFile(path, "pid 7");
  EXPECT_TRUE(third.ok()) << "released when the holder goes away: " << third.status().ToString();
}

}  // namespace
}  // namespace tokenfeed

namespace tokenfeed {
namespace {

TEST(PosixFileSystemTest, RemoveTreeRemovesLinksNotWhatTheyPointTo) {
  ScopedTempDir dir;
  FileSystem* fs = FileSystem::Posix();
  ASSERT_TRUE(fs->CreateDir(dir.Join("outside")).ok());
  ASSERT_TRUE(WriteFileAtomically(fs, dir.Join("outside/precious"), "keep me").ok());
  ASSERT_TRUE(fs->CreateDir(dir.Join("tree")).ok());
  ASSERT_TRUE(fs->CreateDir(dir.Join("tree/sub")).ok());
  ASSERT_EQ(::symlink(dir.Join("outside").c_str(), dir.Join("tree/sub/link-to-dir").c_str()), 0);
  ASSERT_EQ(::symlink(dir.Join("outside/precious").c_str(), dir.Join("tree/link-to-file").c_str()), 0);
  ASSERT_EQ(::symlink(dir.Join("nowhere").c_str(), dir.Join("tree/dangling").c_str()), 0);
  auto info = fs->Stat(dir.Join("tree/sub/link-to-dir"));
  ASSERT_TRUE(info.ok());
  EXPECT_TRUE(info->is_symlink);
  EXPECT_TRUE(info->is_directory) << "the kind of what it points to";
  ASSERT_TRUE(RemoveTree(fs, dir.Join("tree")).ok());
  EXPECT_FALSE(fs->Stat(dir.Join("tree")).ok());
  auto kept = ReadFileToString(fs, dir.Join("outside/precious"));
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_EQ(*kept, "keep me");
}

TEST(PosixFileSystemTest, FilesAreNotOpenedThroughALink) {
  ScopedTempDir dir;
  FileSystem* fs = FileSystem::Posix();
  ASSERT_TRUE(WriteFileAtomically(fs, dir.Join("precious"), "keep me").ok());
  ASSERT_EQ(::symlink(dir.Join("precious").c_str(), dir.Join("link").c_str()), 0);
  for (auto mode : {FileSystem::WriteMode::kTruncate, FileSystem::WriteMode::kAppend}) {
    auto w = fs->OpenWritable(dir.Join("link"), mode);
    ASSERT_FALSE(w.ok());
    EXPECT_EQ(w.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(w.status().message().find("symbolic link"), std::string::npos) << w.status().ToString();
    EXPECT_NE(w.status().message().find(dir.Join("link")), std::string::npos) << w.status().ToString();
  }
  EXPECT_FALSE(fs->OpenReadable(dir.Join("link")).ok());
  auto lock = fs->LockFile(dir.Join("link"), "pid 1 on host h");
  EXPECT_FALSE(lock.ok());
  EXPECT_EQ(*ReadFileToString(fs, dir.Join("precious")), "keep me") << "nothing truncated or written through the link";
}

}  // namespace
}  // namespace tokenfeed
