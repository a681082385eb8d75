#include "base/fault_injection_file_system.h"

#include <algorithm>
#include <cerrno>
#include <string>

#include <gtest/gtest.h>

#include "base/scoped_temp_dir.h"

namespace tokenfeed {
namespace {

using Op = FaultInjectionFileSystem::Op;

std::span<const uint8_t> Bytes(const std::string& s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

std::string Contents(const std::string& path) {
  auto r = ReadFileToString(FileSystem::Posix(), path);
  return r.ok() ? *r : "<" + r.status().ToString() + ">";
}

bool Exists(const std::string& path) { return FileSystem::Posix()->Stat(path).ok(); }

class FaultInjectionFileSystemTest : public ::testing::Test {
 protected:
  ScopedTempDir dir_;
  FaultInjectionFileSystem fs_;
};

TEST_F(FaultInjectionFileSystemTest, PowerCutDropsUnsyncedBytes) {
  const std::string path = dir_.Join("f");
  auto w = fs_.OpenWritable(path, FileSystem::WriteMode::kCreateNew);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(fs_.SyncDir(dir_.path()).ok());
  ASSERT_TRUE((*w)->Append(Bytes("durable ")).ok());
  ASSERT_TRUE((*w)->Sync().ok());
  ASSERT_TRUE((*w)->Append(Bytes("lost")).ok());
  EXPECT_EQ(Contents(path), "durable lost") << "before the cut the page cache has everything";
  EXPECT_EQ(fs_.UnsyncedBytes(), 4u);
  ASSERT_TRUE(fs_.SimulatePowerCut().ok());
  EXPECT_EQ(Contents(path), "durable ");
  EXPECT_EQ(fs_.UnsyncedBytes(), 0u);
  Status dead = (*w)->Append(Bytes("x"));
  EXPECT_FALSE(dead.ok()) << "a file opened before the power cut must not keep working";
  EXPECT_EQ(Contents(path), "durable ");
}

TEST_F(FaultInjectionFileSystemTest, PowerCutCanKeepATornPrefix) {
  const std::string path = dir_.Join("f");
  auto w = fs_.OpenWritable(path, FileSystem::WriteMode::kCreateNew);
  ASSERT_TRUE(fs_.SyncDir(dir_.path()).ok());
  ASSERT_TRUE((*w)->Append(Bytes("AAAA")).ok());
  ASSERT_TRUE((*w)->Sync().ok());
  ASSERT_TRUE((*w)->Append(Bytes(std::string(1000, 'B'))).ok());
  FaultInjectionFileSystem::PowerCutOptions options;
  options.keep_random_unsynced_prefix = true;
  options.seed = 7;
  ASSERT_TRUE(fs_.SimulatePowerCut(options).ok());
  const std::string c = Contents(path);
  ASSERT_GE(c.size(), 4u);
  ASSERT_LE(c.size(), 1004u);
  EXPECT_EQ(c.substr(0, 4), "AAAA");
  EXPECT_EQ(c.substr(4), std::string(c.size() - 4, 'B'));
}

// Out-of-order write-back: synced bytes stay, and the kept unsynced bytes
// are each either as written or zero, block by block, with both kinds seen
// and holes before written blocks.
TEST_F(FaultInjectionFileSystemTest, PowerCutCanWriteBackOutOfOrderLeavingHoles) {
  const std::string path = dir_.Join("holes");
  int holes_before_data = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    {
      auto w = fs_.OpenWritable(path, FileSystem::WriteMode::kTruncate);
      ASSERT_TRUE(w.ok());
      ASSERT_TRUE(fs_.SyncDir(dir_.path()).ok());
      ASSERT_TRUE((*w)->Append(Bytes(std::string(700, 'A'))).ok());  // not block-aligned
      ASSERT_TRUE((*w)->Sync().ok());
      ASSERT_TRUE((*w)->Append(Bytes(std::string(8000, 'B'))).ok());
    }
    FaultInjectionFileSystem::PowerCutOptions options;
    options.keep_random_unsynced_prefix = true;
    options.reorder_write_back = true;
    options.block_bytes = 512;
    options.seed = seed;
    ASSERT_TRUE(fs_.SimulatePowerCut(options).ok());
    const std::string c = Contents(path);
    ASSERT_GE(c.size(), 700u);
    ASSERT_LE(c.size(), 8700u);
    EXPECT_EQ(c.substr(0, 700), std::string(700, 'A')) << "synced bytes are never touched";
    bool hole = false;
    for (size_t block = 512; block < c.size(); block += 512) {
      const size_t from = std::max<size_t>(block, 700), to = std::min(block + 512, c.size());
      const std::string part = c.substr(from, to - from);
      const bool zero = part == std::string(part.size(), '\0');
      EXPECT_TRUE(zero || part == std::string(part.size(), 'B')) << "block at " << block << " is whole or a hole";
      if (zero) hole = true;
      if (!zero && hole) ++holes_before_data;
    }
  }
  EXPECT_GT(holes_before_data, 0) << "holes before written blocks: not only prefixes";
}

TEST_F(FaultInjectionFileSystemTest, PowerCutRemovesEntriesNotMadeDurableInTheirDirectory) {
  ASSERT_TRUE(fs_.CreateDir(dir_.Join("synced")).ok());
  ASSERT_TRUE(fs_.SyncDir(dir_.path()).ok());
  ASSERT_TRUE(fs_.CreateDir(dir_.Join("unsynced")).ok());
  {
    // Data synced, but the directory entry never was.
    auto w = fs_.OpenWritable(dir_.Join("synced/file"), FileSystem::WriteMode::kCreateNew);
    ASSERT_TRUE((*w)->Append(Bytes("x")).ok());
    ASSERT_TRUE((*w)->Sync().ok());
  }
  {
    auto w = fs_.OpenWritable(dir_.Join("synced/kept"), FileSystem::WriteMode::kCreateNew);
    ASSERT_TRUE((*w)->Append(Bytes("y")).ok());
    ASSERT_TRUE((*w)->Sync().ok());
  }
  ASSERT_TRUE(fs_.SyncDir(dir_.Join("synced")).ok());
  {
    auto w = fs_.OpenWritable(dir_.Join("synced/late"), FileSystem::WriteMode::kCreateNew);
    ASSERT_TRUE((*w)->Sync().ok());
  }
  ASSERT_TRUE(fs_.SimulatePowerCut().ok());
  EXPECT_TRUE(Exists(dir_.Join("synced")));
  EXPECT_FALSE(Exists(dir_.Join("unsynced")));
  EXPECT_EQ(Contents(dir_.Join("synced/kept")), "y");
  EXPECT_EQ(Contents(dir_.Join("synced/file")), "x");
  EXPECT_FALSE(Exists(dir_.Join("synced/late")));
}

TEST_F(FaultInjectionFileSystemTest, PowerCutUndoesUnsyncedRename) {
  const std::string target = dir_.Join("meta");
  ASSERT_TRUE(WriteFileAtomically(&fs_, target, "old").ok());
  // The atomic write is durable: it syncs the directory.
  ASSERT_TRUE(fs_.SimulatePowerCut().ok());
  EXPECT_EQ(Contents(target), "old");

  {
    auto w = fs_.OpenWritable(dir_.Join("meta.tmp"), FileSystem::WriteMode::kCreateNew);
    ASSERT_TRUE((*w)->Append(Bytes("new")).ok());
    ASSERT_TRUE((*w)->Sync().ok());
  }
  ASSERT_TRUE(fs_.Rename(dir_.Join("meta.tmp"), target).ok());
  EXPECT_EQ(Contents(target), "new");
  ASSERT_TRUE(fs_.SimulatePowerCut().ok());
  EXPECT_EQ(Contents(target), "old") << "the rename was never synced";
  EXPECT_FALSE(Exists(dir_.Join("meta.tmp"))) << "nor was the temporary file's entry";
}

TEST_F(FaultInjectionFileSystemTest, PowerCutUndoesUnsyncedDirectoryRename) {
  ASSERT_TRUE(fs_.CreateDir(dir_.Join("building")).ok());
  ASSERT_TRUE(WriteFileAtomically(&fs_, dir_.Join("building/f"), "content").ok());
  ASSERT_TRUE(fs_.SyncDir(dir_.path()).ok());
  ASSERT_TRUE(fs_.Rename(dir_.Join("building"), dir_.Join("done")).ok());
  ASSERT_TRUE(fs_.SimulatePowerCut().ok());
  EXPECT_FALSE(Exists(dir_.Join("done")));
  EXPECT_EQ(Contents(dir_.Join("building/f")), "content");

  ASSERT_TRUE(fs_.Rename(dir_.Join("building"), dir_.Join("done")).ok());
  ASSERT_TRUE(fs_.SyncDir(dir_.path()).ok());
  ASSERT_TRUE(fs_.SimulatePowerCut().ok());
  EXPECT_EQ(Contents(dir_.Join("done/f")), "content");
}

TEST_F(FaultInjectionFileSystemTest, InjectedFaultsFireAfterSkipForTheirCount) {
  const std::string path = dir_.Join("seg");
  auto w = fs_.OpenWritable(path, FileSystem::WriteMode::kCreateNew);
  FaultInjectionFileSystem::Fault fault;
  fault.op = Op::kSync;
  fault.path_contains = "seg";
  fault.error = EIO;
  fault.skip = 1;
  fault.times = 2;
  fs_.InjectFault(fault);
  EXPECT_TRUE((*w)->Sync().ok());
  Status s1 = (*w)->Sync();
  Status s2 = (*w)->Sync();
  EXPECT_EQ(s1.code(), StatusCode::kIoError);
  EXPECT_NE(s1.message().find(path), std::string::npos) << s1.ToString();
  EXPECT_FALSE(s2.ok());
  EXPECT_TRUE((*w)->Sync().ok()) << "the fault fired its two times";
  EXPECT_EQ(fs_.OperationCount(Op::kSync), 4u);
}

TEST_F(FaultInjectionFileSystemTest, InjectedAppendFaultCanWritePartially) {
  const std::string path = dir_.Join("seg");
  auto w = fs_.OpenWritable(path, FileSystem::WriteMode::kCreateNew);
  FaultInjectionFileSystem::Fault fault;
  fault.op = Op::kAppend;
  fault.error = EIO;
  fault.partial_bytes = 3;
  fs_.InjectFault(fault);
  Status s = (*w)->Append(Bytes("abcdef"));
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_EQ((*w)->Size(), 3u);
  EXPECT_EQ(Contents(path), "abc");
}

TEST_F(FaultInjectionFileSystemTest, FullDiskWritesWhatFitsThenEnospc) {
  const std::string path = dir_.Join("seg");
  auto w = fs_.OpenWritable(path, FileSystem::WriteMode::kCreateNew);
  fs_.SetFreeSpace(10);
  ASSERT_TRUE((*w)->Append(Bytes("123456")).ok());
  Status s = (*w)->Append(Bytes("abcdef"));
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
  EXPECT_EQ((*w)->Size(), 10u);
  EXPECT_EQ(*fs_.free_space(), 0u);
  ASSERT_TRUE((*w)->Truncate(6).ok());
  EXPECT_EQ(*fs_.free_space(), 4u) << "truncating gives the space back";
  EXPECT_TRUE((*w)->Append(Bytes("wxyz")).ok());
  fs_.SetFreeSpace(std::nullopt);
  EXPECT_TRUE((*w)->Append(Bytes(std::string(1 << 16, 'z'))).ok());
}

}  // namespace
}  // namespace tokenfeed
