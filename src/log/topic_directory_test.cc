#include <unistd.h>

#include <cerrno>

#include <gtest/gtest.h>

#include "base/fault_injection_file_system.h"
#include "base/scoped_temp_dir.h"
#include "log/log_format.h"
#include "log/test_records.h"
#include "log/log.h"

namespace tokenfeed::log {
namespace {

using testing::FillTestBatch;

class TopicTest : public ::testing::Test {
 protected:
  std::string Uri(const std::string& name = "t") { return "log:" + dir_.path() + "/topics/" + name; }
  ScopedTempDir dir_;
};

TEST_F(TopicTest, CreateOpenDescribe) {
  TopicOptions options;
  options.partitions = 3;
  options.segment_bytes = 1 << 16;
  auto topic = TopicDirectory::Create(Uri(), options);
  ASSERT_TRUE(topic.ok()) << topic.status().ToString();
  EXPECT_EQ((*topic)->partition_count(), 3u);
  EXPECT_EQ((*topic)->uri(), Uri());

  auto opened = TopicDirectory::Open(Uri());
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ((*opened)->partition_count(), 3u);
  EXPECT_EQ((*opened)->options().segment_bytes, 1u << 16);

  {
    auto w = (*opened)->OpenWriter(PartitionId(1));
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    BatchBuilder b;
    FillTestBatch(&b, 0, 10);
    ASSERT_TRUE((*w)->Append(&b).ok());
    ASSERT_TRUE((*w)->Close().ok());
  }
  auto d = (*opened)->Describe();
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_EQ(d->partitions.size(), 3u);
  EXPECT_EQ(d->partitions[0].record_count, 0u);
  EXPECT_EQ(d->partitions[1].record_count, 10u);
  EXPECT_EQ(d->partitions[1].end_offset, Offset(10));
  EXPECT_EQ(d->partitions[1].start_offset, Offset(0));
  EXPECT_EQ(d->partitions[1].segment_count, 1u);
  EXPECT_GT(d->partitions[1].bytes, d->partitions[0].bytes);
  EXPECT_EQ(d->format_version, 1u);
  EXPECT_FALSE(d->created_by.empty());

  auto last = (*opened)->ReadLastRecord(PartitionId(1));
  ASSERT_TRUE(last.ok()) << last.status().ToString();
  ASSERT_TRUE(last->has_value());
  EXPECT_EQ((*last)->offset, Offset(9));
  EXPECT_EQ((*last)->bytes, testing::TestRecord(9));
  auto none = (*opened)->ReadLastRecord(PartitionId(2));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST_F(TopicTest, ErrorsSayWhatToDo) {
  ASSERT_TRUE(TopicDirectory::Create(Uri(), {}).ok());
  Status exists = TopicDirectory::Create(Uri(), {}).status();
  EXPECT_EQ(exists.code(), StatusCode::kAlreadyExists);
  EXPECT_NE(exists.message().find(Uri()), std::string::npos) << exists.ToString();

  Status missing = TopicDirectory::Open(Uri("nope")).status();
  EXPECT_TRUE(missing.IsNotFound());
  EXPECT_NE(missing.message().find("create it"), std::string::npos) << missing.ToString();

  ASSERT_TRUE(CreateDirs(FileSystem::Posix(), dir_.Join("topics/plain")).ok());
  Status not_topic = TopicDirectory::Open(Uri("plain")).status();
  EXPECT_TRUE(not_topic.IsNotFound());
  EXPECT_NE(not_topic.message().find("not a tokenfeed topic"), std::string::npos) << not_topic.ToString();
  EXPECT_TRUE(TopicDirectory::Delete(Uri("plain")).IsNotFound()) << "never deletes a directory that is not a topic";
  EXPECT_TRUE(FileSystem::Posix()->Stat(dir_.Join("topics/plain")).ok());

  TopicOptions zero;
  zero.partitions = 0;
  EXPECT_EQ(TopicDirectory::Create(Uri("z"), zero).status().code(), StatusCode::kInvalidArgument);
  TopicOptions tiny;
  tiny.segment_bytes = 100;
  EXPECT_EQ(TopicDirectory::Create(Uri("z"), tiny).status().code(), StatusCode::kInvalidArgument);

  auto topic = TopicDirectory::Open(Uri());
  Status bad_partition = (*topic)->OpenWriter(PartitionId(1)).status();
  EXPECT_EQ(bad_partition.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad_partition.message().find("has 1 partitions"), std::string::npos) << bad_partition.ToString();
}

TEST_F(TopicTest, UnknownMetadataVersionIsUnsupported) {
  ASSERT_TRUE(TopicDirectory::Create(Uri(), {}).ok());
  const std::string meta = dir_.Join("topics/t/topic.meta");
  auto text = ReadFileToString(FileSystem::Posix(), meta);
  ASSERT_TRUE(text.ok());
  std::string edited = *text;
  edited.replace(edited.find("format_version=1"), 16, "format_version=7");
  ASSERT_TRUE(WriteFileAtomically(FileSystem::Posix(), meta, edited).ok());
  Status s = TopicDirectory::Open(Uri()).status();
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("version 7"), std::string::npos) << s.ToString();
}

TEST_F(TopicTest, DeleteRefusesWhileWritingThenRemovesEverything) {
  TopicOptions options;
  options.partitions = 2;
  auto topic = TopicDirectory::Create(Uri(), options);
  ASSERT_TRUE(topic.ok());
  auto w = (*topic)->OpenWriter(PartitionId(1));
  ASSERT_TRUE(w.ok());
  Status busy = TopicDirectory::Delete(Uri());
  EXPECT_EQ(busy.code(), StatusCode::kBusy);
  EXPECT_NE(busy.message().find("partition 1"), std::string::npos) << busy.ToString();
  ASSERT_TRUE((*w)->Close().ok());
  ASSERT_TRUE(TopicDirectory::Delete(Uri()).ok());
  EXPECT_TRUE(TopicDirectory::Open(Uri()).status().IsNotFound());
  auto left = FileSystem::Posix()->ListDir(dir_.Join("topics"));
  ASSERT_TRUE(left.ok());
  EXPECT_TRUE(left->empty()) << "no hidden leftovers: " << (left->empty() ? "" : left->front());
  EXPECT_TRUE(TopicDirectory::Create(Uri(), options).ok()) << "the name is free again";
}

TEST_F(TopicTest, CreateIsAtomicUnderPowerCut) {
  // A power cut at any point of Create leaves either no topic or a whole
  // one: try a cut after each successive directory sync.
  FaultInjectionFileSystem fs;
  TopicOptions options;
  options.partitions = 2;
  for (uint32_t skip = 0; skip < 12; ++skip) {
    SCOPED_TRACE("fault after " + std::to_string(skip) + " directory syncs");
    const std::string uri = Uri("atomic" + std::to_string(skip));
    FaultInjectionFileSystem::Fault fault;
    fault.op = FaultInjectionFileSystem::Op::kSyncDir;
    fault.skip = skip;
    fs.InjectFault(fault);
    Status created = TopicDirectory::Create(uri, options, &fs).status();
    fs.ClearFaults();
    ASSERT_TRUE(fs.SimulatePowerCut().ok());
    auto opened = TopicDirectory::Open(uri, &fs);
    if (opened.ok()) {
      auto d = (*opened)->Describe();
      EXPECT_TRUE(d.ok()) << d.status().ToString();
      auto w = (*opened)->OpenWriter(PartitionId(1), {});
      EXPECT_TRUE(w.ok()) << w.status().ToString();
    } else {
      EXPECT_TRUE(opened.status().IsNotFound()) << opened.status().ToString();
      EXPECT_FALSE(created.ok()) << "Create said OK but the topic did not survive";
    }
  }
}

}  // namespace
}  // namespace tokenfeed::log

namespace tokenfeed::log {
namespace {

// A link planted inside a topic never makes the log touch what it points to:
// deleting the topic removes the link, and a LOCK link is refused, not
// written through (which would truncate its target).
TEST_F(TopicTest, LinksInsideATopicAreNeverFollowed) {
  ASSERT_TRUE(TopicDirectory::Create(Uri(), {}).ok());
  const std::string outside = dir_.Join("outside");
  ASSERT_TRUE(FileSystem::Posix()->CreateDir(outside).ok());
  ASSERT_TRUE(WriteFileAtomically(FileSystem::Posix(), outside + "/precious", "keep me").ok());
  const std::string pdir = dir_.path() + "/topics/t/partition-00000";
  ASSERT_EQ(::symlink(outside.c_str(), (pdir + "/link").c_str()), 0);
  ASSERT_EQ(::unlink((pdir + "/LOCK").c_str()) == 0 || errno == ENOENT, true);
  ASSERT_EQ(::symlink((outside + "/precious").c_str(), (pdir + "/LOCK").c_str()), 0);

  auto topic = TopicDirectory::Open(Uri());
  ASSERT_TRUE(topic.ok());
  auto w = (*topic)->OpenWriter(PartitionId(0));
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("symbolic link"), std::string::npos) << w.status().ToString();
  EXPECT_EQ(*ReadFileToString(FileSystem::Posix(), outside + "/precious"), "keep me");

  ASSERT_TRUE(::unlink((pdir + "/LOCK").c_str()) == 0);
  Status deleted = TopicDirectory::Delete(Uri());
  ASSERT_TRUE(deleted.ok()) << deleted.ToString();
  EXPECT_FALSE(TopicDirectory::Open(Uri()).ok());
  auto kept = ReadFileToString(FileSystem::Posix(), outside + "/precious");
  ASSERT_TRUE(kept.ok()) << "deleting the topic emptied a directory outside it: " << kept.status().ToString();
  EXPECT_EQ(*kept, "keep me");
}

}  // namespace
}  // namespace tokenfeed::log
