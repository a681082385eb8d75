#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <gtest/gtest.h>

#include "base/crc32c.h"
#include "base/fault_injection_file_system.h"
#include "base/scoped_temp_dir.h"
#include "log/batch_access.h"
#include "log/log_format.h"
#include "log/test_records.h"
#include "log/log.h"

namespace tokenfeed::log {
namespace {

using testing::FillTestBatch;
using testing::TestRecord;
using testing::TestRecordNumber;

class PartitionWriterTest : public ::testing::Test {
 protected:
  void SetUp() override { Create(1 << 20); }

  void Create(uint64_t segment_bytes) {
    TopicOptions options;
    options.partitions = 2;
    options.segment_bytes = segment_bytes;
    options.index_interval_bytes = 1024;
    auto t = TopicDirectory::Create(uri_, options, &fs_);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    topic_ = std::move(t).value();
  }

  std::unique_ptr<PartitionWriter> Writer(WriterOptions o = {}) {
    auto w = topic_->OpenWriter(PartitionId(0), o);
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    return w.ok() ? std::move(w).value() : nullptr;
  }

  // Appends batches of `per_batch` records until `total` records exist.
  void AppendUpTo(PartitionWriter* w, uint64_t total, uint32_t per_batch) {
    BatchBuilder b;
    while (w->end_offset().value() < total) {
      const uint64_t first = w->end_offset().value();
      FillTestBatch(&b, first, static_cast<uint32_t>(std::min<uint64_t>(per_batch, total - first)));
      auto r = w->Append(&b);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      ASSERT_EQ(r->base_offset, Offset(first));
    }
  }

  // Every record of partition 0, checking that each names its own offset.
  uint64_t CountVerified() {
    auto r = topic_->OpenReader(PartitionId(0));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    uint64_t n = 0;
    for (;;) {
      auto batch = (*r)->Read();
      EXPECT_TRUE(batch.ok()) << batch.status().ToString();
      if (!batch.ok() || batch->empty()) return n;
      for (LogRecord rec : *batch) {
        EXPECT_EQ(rec.offset, Offset(n));
        EXPECT_EQ(TestRecordNumber(rec.as_string_view()), n);
        ++n;
      }
    }
  }

  std::string PartitionDir() const { return dir_.Join("t/partition-00000"); }
  std::string SegmentPath(uint64_t base) const {
    return PartitionDir() + "/" + format::SegmentFileName(Offset(base));
  }

  ScopedTempDir dir_;
  FaultInjectionFileSystem fs_;
  std::string uri_ = "log:" + dir_.Join("t");
  std::unique_ptr<TopicDirectory> topic_;
};

TEST_F(PartitionWriterTest, AppendAssignsDenseOffsetsAndReadsBack) {
  auto w = Writer();
  BatchBuilder b;
  FillTestBatch(&b, 0, 5);
  auto r1 = w->Append(&b);
  ASSERT_TRUE(r1.ok());
  EXPECT_EQ(r1->base_offset, Offset(0));
  EXPECT_EQ(r1->end_offset(), Offset(5));
  EXPECT_TRUE(r1->durable) << "each-batch is the default";
  FillTestBatch(&b, 5, 1);
  auto r2 = w->Append(&b);
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(r2->base_offset, Offset(5));
  EXPECT_EQ(w->end_offset(), Offset(6));
  EXPECT_EQ(fs_.UnsyncedBytes(".seg"), 0u);
  EXPECT_EQ(CountVerified(), 6u);
  auto last = w->ReadLastRecord();
  ASSERT_TRUE(last.ok() && last->has_value());
  EXPECT_EQ((*last)->offset, Offset(5));
  EXPECT_EQ((*last)->bytes, TestRecord(5));
}

TEST_F(PartitionWriterTest, RejectsEmptyBatch) {
  auto w = Writer();
  BatchBuilder b;
  EXPECT_EQ(w->Append(&b).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(PartitionWriterTest, FsyncNoneLeavesBytesUnsyncedUntilClose) {
  WriterOptions o;
  o.fsync = FsyncPolicy::kNone;
  auto w = Writer(o);
  BatchBuilder b;
  FillTestBatch(&b, 0, 10);
  auto r = w->Append(&b);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->durable);
  EXPECT_GT(fs_.UnsyncedBytes(".seg"), 0u);
  EXPECT_EQ(CountVerified(), 10u) << "visible to readers before it is durable";
  ASSERT_TRUE(w->Close().ok());
  EXPECT_EQ(fs_.UnsyncedBytes(".seg"), 0u) << "Close syncs";
}

TEST_F(PartitionWriterTest, FsyncIntervalSyncsByBytes) {
  WriterOptions o;
  o.fsync = FsyncPolicy::kInterval;
  o.fsync_interval_ms = 1000000;
  o.fsync_interval_bytes = 3000;
  auto w = Writer(o);
  BatchBuilder b;
  int durable = 0;
  for (int i = 0; i < 20; ++i) {
    FillTestBatch(&b, w->end_offset().value(), 10);  // ~500 bytes a batch
    auto r = w->Append(&b);
    ASSERT_TRUE(r.ok());
    durable += r->durable;
    EXPECT_LT(fs_.UnsyncedBytes(".seg"), 3000u + b.size_bytes()) << "the loss bound holds after every append";
  }
  EXPECT_GE(durable, 2);
  EXPECT_LE(durable, 10);
}

TEST_F(PartitionWriterTest, SecondWriterIsBusyAndNamesTheHolder) {
  auto w = Writer();
  auto second = topic_->OpenWriter(PartitionId(0));
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kBusy);
  const std::string& m = second.status().message();
  EXPECT_NE(m.find("partition 0"), std::string::npos) << m;
  EXPECT_NE(m.find("pid " + std::to_string(::getpid())), std::string::npos) << m;
  EXPECT_TRUE(topic_->OpenWriter(PartitionId(1)).ok()) << "other partitions are free";
  ASSERT_TRUE(w->Close().ok());
  EXPECT_TRUE(topic_->OpenWriter(PartitionId(0)).ok()) << "free again after Close";
}

TEST_F(PartitionWriterTest, FullDiskCutsThePartialBatchAndStaysUsable) {
  auto w = Writer();
  AppendUpTo(w.get(), 20, 10);
  fs_.SetFreeSpace(100);
  BatchBuilder b;
  FillTestBatch(&b, 20, 50);
  auto r = w->Append(&b);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(r.status().message().find("partition 0"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find("offset 20"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find("Free disk space"), std::string::npos) << r.status().ToString();
  EXPECT_EQ(w->end_offset(), Offset(20));
  EXPECT_EQ(CountVerified(), 20u) << "nothing of the failed batch is visible";
  fs_.SetFreeSpace(std::nullopt);
  auto retry = w->Append(&b);
  ASSERT_TRUE(retry.ok()) << retry.status().ToString();
  EXPECT_EQ(retry->base_offset, Offset(20));
  EXPECT_EQ(CountVerified(), 70u);
}

TEST_F(PartitionWriterTest, FailedSyncStopsTheWriterUntilReopened) {
  auto w = Writer();
  AppendUpTo(w.get(), 10, 10);
  FaultInjectionFileSystem::Fault fault;
  fault.op = FaultInjectionFileSystem::Op::kSync;
  fault.path_contains = ".seg";
  fs_.InjectFault(fault);
  BatchBuilder b;
  FillTestBatch(&b, 10, 5);
  auto r = w->Append(&b);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIoError);
  EXPECT_NE(r.status().message().find("reopen"), std::string::npos) << r.status().ToString();
  FillTestBatch(&b, 15, 5);
  EXPECT_FALSE(w->Append(&b).ok()) << "no retry after a failed fsync";
  EXPECT_FALSE(w->Sync().ok());
  w.reset();
  auto again = Writer();
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->end_offset(), Offset(15)) << "the unacknowledged batch was in the page cache and is kept";
  EXPECT_TRUE(again->recovery().clean());
}

void AppendRaw(const std::string& path, const std::string& bytes) {
  auto f = FileSystem::Posix()->OpenWritable(path, FileSystem::WriteMode::kAppend);
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->Append({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}).ok());
}

TEST_F(PartitionWriterTest, TornTailIsCutOnOpenAndReported) {
  {
    auto w = Writer();
    AppendUpTo(w.get(), 30, 10);
  }
  auto size = FileSystem::Posix()->Stat(SegmentPath(0));
  ASSERT_TRUE(size.ok());
  // The first part of a batch, as a writer killed inside write() leaves it.
  const std::string next = testing::EncodeTestBatch(30, 10);
  AppendRaw(SegmentPath(0), next.substr(0, next.size() / 2));
  EXPECT_EQ(CountVerified(), 30u) << "readers do not see the torn batch: it is not yet visible, not corrupt";
  auto w = Writer();
  ASSERT_NE(w, nullptr);
  EXPECT_FALSE(w->recovery().clean());
  EXPECT_EQ(w->recovery().truncated_at_position, size->size);
  EXPECT_EQ(w->recovery().truncated_bytes, next.size() / 2);
  EXPECT_NE(w->recovery().ToString().find("cut"), std::string::npos);
  EXPECT_EQ(w->end_offset(), Offset(30));
  AppendUpTo(w.get(), 40, 10);
  EXPECT_EQ(CountVerified(), 40u);
}

TEST_F(PartitionWriterTest, GarbageTailAfterPowerLossIsCutOnOpen) {
  {
    auto w = Writer();
    AppendUpTo(w.get(), 30, 10);
  }
  // A whole batch's worth of bytes that are not what was written (pages
  // that never reached the disk), with nothing valid after them.
  std::string garbage = testing::EncodeTestBatch(30, 10);
  for (size_t i = 20; i < garbage.size(); i += 3) garbage[i] = 0;
  AppendRaw(SegmentPath(0), garbage);
  auto w = Writer();
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->recovery().truncated_bytes, garbage.size());
  EXPECT_NE(w->recovery().truncation_reason.find("checksum"), std::string::npos) << w->recovery().ToString();
  EXPECT_EQ(w->end_offset(), Offset(30));
  EXPECT_EQ(CountVerified(), 30u);
}

TEST_F(PartitionWriterTest, DamageInTheMiddleRefusesToOpenUnlessDiscardIsAsked) {
  {
    auto w = Writer();
    AppendUpTo(w.get(), 40, 10);
  }
  // Flip a byte inside the second batch's records: it fails its CRC while
  // two valid batches follow.
  auto f = FileSystem::Posix()->OpenReadable(SegmentPath(0));
  uint8_t header[format::kBatchHeaderSize];
  ASSERT_EQ(*(*f)->ReadAt(format::kSegmentHeaderSize, header), sizeof(header));
  const uint32_t first_len = header[8] | header[9] << 8 | header[10] << 16 | header[11] << 24;
  const uint64_t second = format::kSegmentHeaderSize + first_len;
  {
    auto all = ReadFileToString(FileSystem::Posix(), SegmentPath(0));
    std::string bytes = *all;
    bytes[second + format::kBatchHeaderSize + 7] ^= 0x55;
    ASSERT_TRUE(WriteFileAtomically(FileSystem::Posix(), SegmentPath(0), bytes).ok());
  }
  auto refused = topic_->OpenWriter(PartitionId(0));
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(refused.status().IsCorruption());
  const std::string& m = refused.status().message();
  EXPECT_NE(m.find("partition 0"), std::string::npos) << m;
  EXPECT_NE(m.find("position " + std::to_string(second)), std::string::npos) << m;
  EXPECT_NE(m.find("offset 10"), std::string::npos) << m;
  EXPECT_NE(m.find("discard_after_damage"), std::string::npos) << m;

  WriterOptions discard;
  discard.discard_after_damage = true;
  auto w = Writer(discard);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->end_offset(), Offset(10));
  EXPECT_NE(w->recovery().truncation_reason.find("discarded on request"), std::string::npos);
  EXPECT_EQ(CountVerified(), 10u);
}

// A bit flipped in the last batch, which the writer had synced: not a torn
// tail (those are bytes after the last sync) but damage. Describe does not
// count the batch and says why; the writer refuses to open and changes
// nothing; asked to discard, it keeps the bytes beside the segment first.
// Whether the writer closed or was killed (no Close: its recovery point is
// in the page cache only) makes no difference.
class FlippedBitTest : public PartitionWriterTest, public ::testing::WithParamInterface<bool> {};

TEST_P(FlippedBitTest, InTheLastSyncedBatchIsDamageNotATornTail) {
  {
    auto w = Writer();
    AppendUpTo(w.get(), 30, 10);
    if (GetParam()) {
      ASSERT_TRUE(w->Close().ok());
    }
  }
  const std::string before = *ReadFileToString(FileSystem::Posix(), SegmentPath(0));
  const uint64_t last =
      format::kSegmentHeaderSize + testing::EncodeTestBatch(0, 10).size() + testing::EncodeTestBatch(10, 10).size();
  std::string damaged = before;
  damaged[last + format::kBatchHeaderSize + 9] ^= 0x04;
  {
    auto f = FileSystem::Posix()->OpenWritable(SegmentPath(0), FileSystem::WriteMode::kTruncate);
    ASSERT_TRUE((*f)->Append({reinterpret_cast<const uint8_t*>(damaged.data()), damaged.size()}).ok());
  }

  auto d = topic_->Describe();
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->partitions[0].end_offset, Offset(20)) << "the damaged batch is not counted";
  EXPECT_NE(d->partitions[0].problem.find("position " + std::to_string(last)), std::string::npos)
      << d->partitions[0].problem;

  auto refused = topic_->OpenWriter(PartitionId(0));
  ASSERT_FALSE(refused.ok()) << "recovery cut acknowledged records: " << (*refused)->recovery().ToString();
  EXPECT_TRUE(refused.status().IsCorruption());
  const std::string& m = refused.status().message();
  EXPECT_NE(m.find("partition 0"), std::string::npos) << m;
  EXPECT_NE(m.find(SegmentPath(0)), std::string::npos) << m;
  EXPECT_NE(m.find("position " + std::to_string(last)), std::string::npos) << m;
  EXPECT_NE(m.find("offset 20"), std::string::npos) << m;
  EXPECT_NE(m.find("synced"), std::string::npos) << m;
  EXPECT_NE(m.find("discard_after_damage"), std::string::npos) << m;
  EXPECT_EQ(*ReadFileToString(FileSystem::Posix(), SegmentPath(0)), damaged) << "nothing was cut";

  WriterOptions discard;
  discard.discard_after_damage = true;
  auto w = Writer(discard);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->end_offset(), Offset(20));
  EXPECT_TRUE(w->recovery().damage);
  const std::string kept = w->recovery().quarantined_file;
  EXPECT_EQ(kept, SegmentPath(0) + ".damaged-" + std::to_string(last));
  auto kept_bytes = ReadFileToString(FileSystem::Posix(), kept);
  ASSERT_TRUE(kept_bytes.ok()) << kept_bytes.status().ToString();
  EXPECT_EQ(*kept_bytes, damaged.substr(last)) << "the discarded bytes are kept, as they were";
  EXPECT_NE(w->recovery().ToString().find(kept), std::string::npos) << w->recovery().ToString();
  AppendUpTo(w.get(), 40, 10);
  w.reset();
  EXPECT_EQ(CountVerified(), 40u);
  auto again = Writer();
  ASSERT_NE(again, nullptr);
  EXPECT_TRUE(again->recovery().clean()) << again->recovery().ToString();
}

INSTANTIATE_TEST_SUITE_P(WriterEnd, FlippedBitTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "Closed" : "Killed"; });

// Bytes after the last sync are a torn tail even when a valid batch follows
// the damaged one: a power cut writes unsynced pages back in any order.
TEST_F(PartitionWriterTest, ReorderedWriteBackAfterTheLastSyncIsATornTail) {
  WriterOptions none;
  none.fsync = FsyncPolicy::kNone;
  {
    auto w = Writer();
    AppendUpTo(w.get(), 20, 10);  // synced
  }
  const uint64_t synced = FileSystem::Posix()->Stat(SegmentPath(0))->size;
  {
    auto w = Writer(none);  // its open syncs what is there and names it the recovery point
    AppendUpTo(w.get(), 50, 10);  // not synced
  }
  // As if the power failed: the middle batch's records never reached the disk.
  std::string bytes = *ReadFileToString(FileSystem::Posix(), SegmentPath(0));
  const uint64_t second = synced + testing::EncodeTestBatch(20, 10).size();
  for (uint64_t i = second + format::kBatchHeaderSize; i < second + 200; ++i) bytes[i] = 0;
  {
    auto f = FileSystem::Posix()->OpenWritable(SegmentPath(0), FileSystem::WriteMode::kTruncate);
    ASSERT_TRUE((*f)->Append({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}).ok());
  }
  auto w = Writer();
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->end_offset(), Offset(30));
  EXPECT_FALSE(w->recovery().damage);
  EXPECT_EQ(w->recovery().truncated_at_position, second);
  EXPECT_EQ(CountVerified(), 30u);
}

TEST_F(PartitionWriterTest, HeaderlessSegmentFromAnInterruptedRollIsRemoved) {
  {
    auto w = Writer();
    AppendUpTo(w.get(), 10, 10);
  }
  // As if a roll crashed right after creating the next file.
  ASSERT_TRUE(WriteFileAtomically(FileSystem::Posix(), SegmentPath(10), "").ok());
  auto w = Writer();
  ASSERT_NE(w, nullptr);
  ASSERT_EQ(w->recovery().removed_segments.size(), 1u);
  EXPECT_EQ(w->recovery().removed_segments[0], SegmentPath(10));
  EXPECT_EQ(w->end_offset(), Offset(10));
  EXPECT_FALSE(FileSystem::Posix()->Stat(SegmentPath(10)).ok());
}

class SmallSegmentsTest : public PartitionWriterTest {
 protected:
  void SetUp() override { Create(16 << 10); }
};

TEST_F(SmallSegmentsTest, RollsAndReopens) {
  {
    auto w = Writer();
    AppendUpTo(w.get(), 3000, 50);
    ASSERT_TRUE(w->Close().ok());
  }
  auto d = topic_->Describe();
  ASSERT_TRUE(d.ok());
  EXPECT_GT(d->partitions[0].segment_count, 3u);
  EXPECT_EQ(d->partitions[0].end_offset, Offset(3000));
  {
    auto w = Writer();
    ASSERT_NE(w, nullptr);
    EXPECT_TRUE(w->recovery().clean()) << w->recovery().ToString();
    EXPECT_EQ(w->end_offset(), Offset(3000));
    AppendUpTo(w.get(), 3500, 50);
  }
  EXPECT_EQ(CountVerified(), 3500u);
}

TEST_F(SmallSegmentsTest, LastRecordAfterRollIsFoundInThePreviousSegment) {
  auto w = Writer();
  AppendUpTo(w.get(), 1000, 50);
  // Force a roll with nothing after it: the new active segment is empty.
  BatchBuilder big;
  FillTestBatch(&big, 1000, 400);
  ASSERT_TRUE(w->Append(&big).ok());
  ASSERT_TRUE(w->Close().ok());
  auto again = Writer();
  auto last = again->ReadLastRecord();
  ASSERT_TRUE(last.ok() && last->has_value()) << last.status().ToString();
  EXPECT_EQ((*last)->offset, Offset(1399));
  auto from_topic = topic_->ReadLastRecord(PartitionId(0));
  ASSERT_TRUE(from_topic.ok() && from_topic->has_value());
  EXPECT_EQ((*from_topic)->offset, Offset(1399));
}

TEST_F(SmallSegmentsTest, MissingOrDamagedSealedIndexIsRebuilt) {
  {
    auto w = Writer();
    AppendUpTo(w.get(), 2000, 50);
  }
  auto d = topic_->Describe();
  ASSERT_GT(d->partitions[0].segment_count, 2u);
  const std::string idx0 = PartitionDir() + "/" + format::IndexFileName(Offset(0));
  ASSERT_TRUE(FileSystem::Posix()->RemoveFile(idx0).ok());
  auto w = Writer();
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->recovery().rebuilt_indexes, 1u);
  EXPECT_TRUE(FileSystem::Posix()->Stat(idx0).ok());
  EXPECT_EQ(CountVerified(), 2000u);
}

}  // namespace
}  // namespace tokenfeed::log
