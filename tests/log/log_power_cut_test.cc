// Power cuts through the fault-injection file system: after each cut only
// synced bytes (and, in the torn mode, a random prefix of the unsynced ones)
// remain. Recovery must cut any torn tail cleanly, keep every record that was
// acknowledged as durable, keep offsets dense, and let the writer continue.
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "base/fault_injection_file_system.h"
#include "base/scoped_temp_dir.h"
#include "log/test_records.h"
#include "log/log.h"

namespace tokenfeed::log {
namespace {

using testing::FillTestBatch;
using testing::TestRecordNumber;

uint64_t VerifyAll(TopicDirectory* topic) {
  auto r = topic->OpenReader(PartitionId(0));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return 0;
  uint64_t n = 0;
  for (;;) {
    auto b = (*r)->Read();
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    if (!b.ok() || b->empty()) return n;
    for (LogRecord rec : *b) {
      if (rec.offset != Offset(n) || TestRecordNumber(rec.as_string_view()) != n) {
        ADD_FAILURE() << "record at offset " << rec.offset.value() << " is not record " << n;
        return n;
      }
      ++n;
    }
  }
}

class LogPowerCutTest : public ::testing::TestWithParam<bool> {};

TEST_P(LogPowerCutTest, OnlySyncedDataSurvivesAndRecoveryIsClean) {
  const bool torn = GetParam();
  ScopedTempDir dir;
  FaultInjectionFileSystem fs;
  TopicOptions topic_options;
  topic_options.segment_bytes = 32 << 10;  // many rolls, so cuts land around them
  topic_options.index_interval_bytes = 2048;
  const std::string uri = "log:" + dir.Join("pc");
  ASSERT_TRUE(TopicDirectory::Create(uri, topic_options, &fs).ok());

  std::mt19937_64 rng(torn ? 77 : 78);
  uint64_t durable_end = 0;  // every record below this was acknowledged as durable
  int cut_tails = 0;
  for (int round = 0; round < 40; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    auto topic = TopicDirectory::Open(uri, &fs);
    ASSERT_TRUE(topic.ok()) << topic.status().ToString();
    WriterOptions options;
    const int policy = static_cast<int>(rng() % 3);
    options.fsync = policy == 0 ? FsyncPolicy::kEachBatch : policy == 1 ? FsyncPolicy::kInterval : FsyncPolicy::kNone;
    options.fsync_interval_ms = 1000000;
    options.fsync_interval_bytes = 8 << 10;
    auto w = (*topic)->OpenWriter(PartitionId(0), options);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    PartitionWriter& writer = **w;
    cut_tails += !writer.recovery().clean();
    ASSERT_GE(writer.end_offset().value(), durable_end) << "durable records were lost: " << writer.recovery().ToString();
    ASSERT_EQ(VerifyAll(topic->get()), writer.end_offset().value());

    BatchBuilder b;
    const int batches = 1 + static_cast<int>(rng() % 25);
    for (int i = 0; i < batches; ++i) {
      FillTestBatch(&b, writer.end_offset().value(), 1 + static_cast<uint32_t>(rng() % 60));
      auto r = writer.Append(&b);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      if (r->durable) durable_end = r->end_offset().value();
      if (rng() % 10 == 0) {
        ASSERT_TRUE(writer.Sync().ok());
        durable_end = writer.end_offset().value();
      }
    }
    FaultInjectionFileSystem::PowerCutOptions cut;
    cut.keep_random_unsynced_prefix = torn;
    cut.seed = rng();
    ASSERT_TRUE(fs.SimulatePowerCut(cut).ok());
  }
  auto topic = TopicDirectory::Open(uri, &fs);
  ASSERT_TRUE(topic.ok());
  auto w = (*topic)->OpenWriter(PartitionId(0));
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_GE((*w)->end_offset().value(), durable_end);
  EXPECT_EQ(VerifyAll(topic->get()), (*w)->end_offset().value());
  if (torn) {
    EXPECT_GT(cut_tails, 0) << "the torn mode must have produced tails to cut (seeded)";
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, LogPowerCutTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "TornPrefix" : "DropUnsynced"; });

TEST(LogPowerCutTest, CrashDuringRecoveryIsRecoveredNextTime) {
  ScopedTempDir dir;
  FaultInjectionFileSystem fs;
  const std::string uri = "log:" + dir.Join("rr");
  auto topic = TopicDirectory::Create(uri, {}, &fs);
  ASSERT_TRUE(topic.ok());
  {
    auto w = (*topic)->OpenWriter(PartitionId(0));
    BatchBuilder b;
    FillTestBatch(&b, 0, 10);
    ASSERT_TRUE((*w)->Append(&b).ok());
  }
  // A torn batch at the tail.
  const std::string torn = testing::EncodeTestBatch(10, 10);
  {
    // Written behind the fault-injection layer, so it counts as on disk.
    auto f = FileSystem::Posix()->OpenWritable(dir.Join("rr/partition-00000/00000000000000000000.seg"), FileSystem::WriteMode::kAppend);
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE((*f)->Append({reinterpret_cast<const uint8_t*>(torn.data()), torn.size() / 3}).ok());
  }
  // The first recovery fails while cutting the tail (a crash there would
  // leave the same state)...
  FaultInjectionFileSystem::Fault fault;
  fault.op = FaultInjectionFileSystem::Op::kTruncate;
  fs.InjectFault(fault);
  Status failed = (*topic)->OpenWriter(PartitionId(0)).status();
  EXPECT_EQ(failed.code(), StatusCode::kIoError);
  EXPECT_NE(failed.message().find("torn tail"), std::string::npos) << failed.ToString();
  fs.ClearFaults();
  // ...and the next one completes it.
  auto w = (*topic)->OpenWriter(PartitionId(0));
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ((*w)->end_offset(), Offset(10));
  EXPECT_FALSE((*w)->recovery().clean());
  EXPECT_EQ(VerifyAll(topic->get()), 10u);
}

}  // namespace
}  // namespace tokenfeed::log
