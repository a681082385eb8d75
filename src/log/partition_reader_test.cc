#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include <gtest/gtest.h>

#include "base/scoped_temp_dir.h"
#include "log/log_format.h"
#include "log/test_records.h"
#include "log/log.h"
#include "tokenfeed/record.h"

namespace tokenfeed::log {
namespace {

using std::chrono::milliseconds;
using testing::FillTestBatch;
using testing::TestRecordNumber;

class PartitionReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TopicOptions options;
    options.segment_bytes = 16 << 10;
    options.index_interval_bytes = 1024;
    auto t = TopicDirectory::Create(uri_, options);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    topic_ = std::move(t).value();
    auto w = topic_->OpenWriter(PartitionId(0));
    ASSERT_TRUE(w.ok());
    writer_ = std::move(w).value();
  }

  void Append(uint64_t total, uint32_t per_batch) {
    BatchBuilder b;
    while (writer_->end_offset().value() < total) {
      const uint64_t first = writer_->end_offset().value();
      FillTestBatch(&b, first, static_cast<uint32_t>(std::min<uint64_t>(per_batch, total - first)));
      ASSERT_TRUE(writer_->Append(&b).ok());
    }
  }

  std::unique_ptr<PartitionReader> Reader(ReaderOptions o = {}) {
    auto r = topic_->OpenReader(PartitionId(0), o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return std::move(r).value();
  }

  // Flips a bit of byte `at` of the third batch's body (after its header)
  // in segment 0; returns the batch's file position.
  uint64_t DamageThirdBatch(size_t at) {
    auto all = ReadFileToString(FileSystem::Posix(), SegmentPath(0));
    EXPECT_TRUE(all.ok()) << all.status().ToString();
    std::string bytes = *all;
    uint64_t pos = format::kSegmentHeaderSize;
    for (int i = 0; i < 2; ++i) {
      uint32_t len;
      std::memcpy(&len, bytes.data() + pos + 8, 4);
      pos += len;
    }
    bytes[pos + format::kBatchHeaderSize + at] ^= 0x01;
    EXPECT_TRUE(WriteFileAtomically(FileSystem::Posix(), SegmentPath(0), bytes).ok());
    return pos;
  }

  std::string SegmentPath(uint64_t base) {
    return dir_.Join("t/partition-00000/" + format::SegmentFileName(Offset(base)));
  }

  ScopedTempDir dir_;
  std::string uri_ = "log:" + dir_.Join("t");
  std::unique_ptr<TopicDirectory> topic_;
  std::unique_ptr<PartitionWriter> writer_;
};

TEST_F(PartitionReaderTest, ReadsEverythingAcrossSegmentsInOrder) {
  Append(2000, 37);
  auto r = Reader();
  uint64_t n = 0;
  for (int guard = 0; guard < 10000; ++guard) {
    auto b = r->Read();
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    if (b->empty()) break;
    EXPECT_EQ(b->first_offset(), Offset(n));
    for (LogRecord rec : *b) {
      ASSERT_EQ(rec.offset, Offset(n));
      ASSERT_EQ(TestRecordNumber(rec.as_string_view()), n);
      ++n;
    }
  }
  EXPECT_EQ(n, 2000u);
  EXPECT_EQ(r->position(), Offset(2000));
  EXPECT_EQ(*r->EndOffset(), Offset(2000));
  auto d = topic_->Describe();
  EXPECT_GT(d->partitions[0].segment_count, 3u) << "the test must cross segment files";
}

TEST_F(PartitionReaderTest, SeekToEveryOffset) {
  Append(700, 13);
  auto r = Reader();
  for (uint64_t target = 0; target <= 700; target += 7) {
    ASSERT_TRUE(r->Seek(Offset(target)).ok()) << target;
    EXPECT_EQ(r->position(), Offset(target));
    auto b = r->Read();
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    if (target == 700) {
      EXPECT_TRUE(b->empty());
      continue;
    }
    ASSERT_FALSE(b->empty()) << target;
    EXPECT_EQ(b->first_offset(), Offset(target)) << "the view starts at the sought offset, inside its batch";
    EXPECT_EQ(TestRecordNumber((*b->begin()).as_string_view()), target);
  }
}

// A reader checks a sealed batch's checksum once and then trusts it; the
// records must still come back right whichever way it revisits them, and
// another reader must check again.
TEST_F(PartitionReaderTest, RevisitsSealedBatchesInAnyOrderAndANewReaderChecksAgain) {
  Append(2000, 37);
  ASSERT_TRUE(writer_->Close().ok());
  auto r = Reader();
  uint64_t x = 12345;
  for (int i = 0; i < 300; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const uint64_t target = (x >> 33) % 2000;
    ASSERT_TRUE(r->Seek(Offset(target)).ok()) << target;
    auto b = r->Read();
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    ASSERT_FALSE(b->empty()) << target;
    uint64_t n = target;
    for (LogRecord rec : *b) ASSERT_EQ(TestRecordNumber(rec.as_string_view()), n++);
  }
  // A payload byte of the first record (past its 4-byte length) of the
  // third batch of the first (sealed) segment: only the data checksum can
  // tell.
  DamageThirdBatch(6);
  auto fresh = Reader();
  ASSERT_TRUE(fresh->Seek(Offset(74)).ok());
  auto b = fresh->Read();
  ASSERT_TRUE(b.status().IsCorruption()) << "a new reader checks the batch again";
  EXPECT_NE(b.status().message().find("checksum"), std::string::npos) << b.status().ToString();
  EXPECT_NE(b.status().message().find("offset 74"), std::string::npos) << b.status().ToString();
}

// Batches of several hundred records: a revisit starts its walk to the
// sought record at the nearest of the marks taken at the first visit (every
// 64th record), which must land on exactly that record, at every distance
// from a mark.
TEST_F(PartitionReaderTest, RevisitsLandOnTheSoughtRecordInsideLargeBatches) {
  Append(3000, 300);
  Append(3100, 100);  // the last segment's batches are read without marks
  ASSERT_TRUE(writer_->Close().ok());
  auto r = Reader();
  for (int pass = 0; pass < 2; ++pass) {  // the first pass takes the marks, the second uses them
    for (uint64_t target = pass; target < 3100; target += 61) {
      ASSERT_TRUE(r->Seek(Offset(target)).ok()) << target;
      auto b = r->Read();
      ASSERT_TRUE(b.ok()) << b.status().ToString();
      ASSERT_FALSE(b->empty()) << target;
      ASSERT_EQ(b->first_offset(), Offset(target));
      uint64_t n = target;
      for (LogRecord rec : *b) ASSERT_EQ(TestRecordNumber(rec.as_string_view()), n++) << "sought " << target;
      EXPECT_EQ(n % 100, 0u) << "the view runs to the end of its batch";
    }
  }
}

// The active segment is read through the buffer: a batch checked before is
// read again only in part, from the sought record a few hundred records on.
// Reading on from any record must still give every record in order, across
// the parts, to the end of the batch and into the next one.
TEST_F(PartitionReaderTest, RevisitsOfTheActiveSegmentReadPartsOfBatchesAndGoOnAcrossThem) {
  TopicOptions options;
  options.segment_bytes = 64 << 20;  // all in the active segment
  const std::string uri = "log:" + dir_.Join("big");
  auto t = TopicDirectory::Create(uri, options);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  {
    auto w = (*t)->OpenWriter(PartitionId(0));
    ASSERT_TRUE(w.ok());
    BatchBuilder b;
    for (uint64_t first : {0u, 1000u, 2000u}) {
      FillTestBatch(&b, first, 1000);
      ASSERT_TRUE((*w)->Append(&b).ok());
    }
  }
  auto r = (*t)->OpenReader(PartitionId(0), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (int pass = 0; pass < 2; ++pass) {  // the first pass checks the batches whole, the second reads parts
    for (uint64_t target = pass; target < 3000; target += 137) {
      ASSERT_TRUE((*r)->Seek(Offset(target)).ok()) << target;
      uint64_t n = target;
      int reads = 0;
      while (n < std::min<uint64_t>(target + 1200, 3000)) {
        auto b = (*r)->Read();
        ASSERT_TRUE(b.ok()) << b.status().ToString();
        ASSERT_FALSE(b->empty()) << "at " << n << ", sought " << target;
        ASSERT_EQ(b->first_offset(), Offset(n));
        for (LogRecord rec : *b) ASSERT_EQ(TestRecordNumber(rec.as_string_view()), n++) << "sought " << target;
        EXPECT_EQ((*r)->position(), Offset(n));
        ++reads;
      }
      if (pass == 1 && target % 1000 < 600 && target + 1200 <= 3000) {
        EXPECT_GT(reads, 2) << "a revisit reads parts of a batch, not the whole; sought " << target;
      }
    }
  }
}

// A reader trusts a batch it checked before only while the batch at that
// place is still the same: a segment file replaced (sealed) or its tail cut
// and written anew (active) with other records of the same offsets must be
// read as it is now, not through what the reader noted about the old batch
// (where its records started).
TEST_F(PartitionReaderTest, ABatchReplacedSinceItWasCheckedIsCheckedAndReadAsItIsNow) {
  Append(300, 300);
  Append(600, 300);  // one batch per segment: segments 0 (sealed) and 300 (active)
  ASSERT_EQ(topic_->Describe()->partitions[0].segment_count, 2u);
  ASSERT_TRUE(writer_->Close().ok());
  auto r = Reader();
  auto expect_at = [&](uint64_t target, size_t max_extra) {
    ASSERT_TRUE(r->Seek(Offset(target)).ok()) << target;
    auto b = r->Read();
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    ASSERT_FALSE(b->empty()) << target;
    uint64_t n = target;
    for (LogRecord rec : *b) ASSERT_EQ(TestRecordNumber(rec.as_string_view(), max_extra), n++) << "sought " << target;
    EXPECT_EQ(n % 300, 0u);
  };
  expect_at(250, 61);  // checked, and marks taken
  expect_at(550, 61);
  // The same offsets, records of other sizes: the marks no longer fit.
  auto sealed = ReadFileToString(FileSystem::Posix(), SegmentPath(0));
  auto active = ReadFileToString(FileSystem::Posix(), SegmentPath(300));
  ASSERT_TRUE(sealed.ok() && active.ok());
  const std::string new_sealed =
      sealed->substr(0, format::kSegmentHeaderSize) + testing::EncodeTestBatch(0, 300, 5);
  const std::string new_active =
      active->substr(0, format::kSegmentHeaderSize) + testing::EncodeTestBatch(300, 300, 5);
  ASSERT_NE(new_sealed.size(), sealed->size());
  ASSERT_TRUE(WriteFileAtomically(FileSystem::Posix(), SegmentPath(0), new_sealed).ok());
  ASSERT_TRUE(WriteFileAtomically(FileSystem::Posix(), SegmentPath(300), new_active).ok());
  expect_at(250, 5);  // reopens segment 0 (the reader was in segment 300)
  expect_at(550, 5);  // reopens segment 300
  expect_at(130, 5);
  expect_at(599, 5);
}

// A sealed segment's batch is read in place from its map, and its owner
// keeps those bytes readable after the reader has moved on and is gone (the
// loader keeps pointers into them instead of copying); the active segment's
// batches live in the reader's buffer and have no owner.
TEST_F(PartitionReaderTest, SealedBatchesHaveAnOwnerThatOutlivesTheReader) {
  Append(2000, 37);
  ASSERT_GT(topic_->Describe()->partitions[0].segment_count, 3u);
  auto r = Reader();
  ASSERT_TRUE(r->Seek(Offset(40)).ok());
  auto b = r->Read();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ASSERT_FALSE(b->empty());
  std::shared_ptr<const void> owner = r->LastBatchOwner();
  ASSERT_NE(owner, nullptr) << "segment 0 is sealed and mapped";
  std::vector<std::string_view> kept;
  for (LogRecord rec : *b) kept.push_back(rec.as_string_view());
  ASSERT_TRUE(r->Seek(Offset(1999)).ok());  // into the active segment
  auto last = r->Read();
  ASSERT_TRUE(last.ok() && !last->empty());
  EXPECT_EQ(r->LastBatchOwner(), nullptr) << "the active segment is read through the buffer";
  r.reset();
  uint64_t n = 40;
  for (std::string_view bytes : kept) EXPECT_EQ(TestRecordNumber(bytes), n++);
  auto again = Reader();
  ASSERT_TRUE(again->Seek(Offset(2000)).ok());
  auto none = again->Read(milliseconds(0));
  ASSERT_TRUE(none.ok() && none->empty());
  EXPECT_EQ(again->LastBatchOwner(), nullptr) << "no batch, no owner";
}

// Seeks reuse the open segment when they can: backward and forward within
// it, forward within the active segment as it grows, and on into segments
// written since. Every landing must be the exact record.
TEST_F(PartitionReaderTest, SeeksBackAndForthAndIntoSegmentsWrittenSince) {
  Append(700, 13);
  auto r = Reader();
  auto expect_at = [&](uint64_t target) {
    ASSERT_TRUE(r->Seek(Offset(target)).ok()) << target;
    auto b = r->Read();
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    ASSERT_FALSE(b->empty()) << target;
    EXPECT_EQ(b->first_offset(), Offset(target));
    EXPECT_EQ(TestRecordNumber((*b->begin()).as_string_view()), target);
  };
  for (uint64_t target = 699;; target -= 11) {
    expect_at(target);
    if (target < 11) break;
  }
  for (uint64_t target : {650u, 655u, 690u, 699u, 660u, 3u, 699u}) expect_at(target);
  const uint64_t segments_before = topic_->Describe()->partitions[0].segment_count;
  Append(2000, 13);  // the active segment grows, rolls, and more follow
  EXPECT_GT(topic_->Describe()->partitions[0].segment_count, segments_before);
  for (uint64_t target : {700u, 720u, 1999u, 1000u, 1500u, 698u}) expect_at(target);
  ASSERT_TRUE(r->Seek(Offset(2000)).ok());
  auto at_end = r->Read(milliseconds(0));
  ASSERT_TRUE(at_end.ok());
  EXPECT_TRUE(at_end->empty());
  EXPECT_EQ(r->Seek(Offset(2001)).code(), StatusCode::kOutOfRange);
  expect_at(1234);
}

TEST_F(PartitionReaderTest, SeekOutOfRange) {
  Append(10, 10);
  auto r = Reader();
  Status s = r->Seek(Offset(11));
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_NE(s.message().find("end offset 10"), std::string::npos) << s.ToString();
  EXPECT_TRUE(r->Seek(Offset(10)).ok());
}

TEST_F(PartitionReaderTest, SeekWorksWithADamagedIndex) {
  Append(700, 13);
  const std::string idx = dir_.Join("t/partition-00000/" + format::IndexFileName(Offset(0)));
  // Entries that point at wrong places: the reader must check and fall back.
  auto bytes = ReadFileToString(FileSystem::Posix(), idx);
  ASSERT_TRUE(bytes.ok());
  std::string damaged = *bytes;
  for (size_t i = format::kIndexHeaderSize + 4; i + 4 <= damaged.size(); i += format::kIndexEntrySize) damaged[i] ^= 0x08;
  ASSERT_TRUE(WriteFileAtomically(FileSystem::Posix(), idx, damaged).ok());
  auto r = Reader();
  for (uint64_t target : {1u, 50u, 133u, 199u}) {
    ASSERT_TRUE(r->Seek(Offset(target)).ok());
    auto b = r->Read();
    ASSERT_TRUE(b.ok() && !b->empty()) << target;
    EXPECT_EQ(TestRecordNumber((*b->begin()).as_string_view()), target);
  }
}

TEST_F(PartitionReaderTest, WaitReturnsEmptyAfterTheTimeoutAndThenSeesNewData) {
  Append(5, 5);
  auto r = Reader();
  ASSERT_EQ(r->Read()->size(), 5u);
  const auto start = std::chrono::steady_clock::now();
  auto empty = r->Read(milliseconds(30));
  const auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  EXPECT_GE(waited, milliseconds(30));
  Append(8, 3);
  auto more = r->Read(milliseconds(1000));
  ASSERT_TRUE(more.ok());
  EXPECT_EQ(more->first_offset(), Offset(5));
  EXPECT_EQ(more->size(), 3u);
}

TEST_F(PartitionReaderTest, DamageInTheMiddleIsCorruptionNamingPartitionOffsetAndFile) {
  Append(100, 10);
  ASSERT_TRUE(writer_->Close().ok());
  // Damage the record bytes of the third batch.
  const uint64_t pos = DamageThirdBatch(2);
  auto r = Reader();
  uint64_t seen = 0;
  Status error;
  for (int guard = 0; guard < 100; ++guard) {
    auto b = r->Read();
    if (!b.ok()) {
      error = b.status();
      break;
    }
    if (b->empty()) break;
    seen += b->size();
  }
  EXPECT_EQ(seen, 20u) << "the two good batches before the damage are delivered";
  ASSERT_TRUE(error.IsCorruption()) << error.ToString();
  const std::string& m = error.message();
  EXPECT_NE(m.find("partition 0"), std::string::npos) << m;
  EXPECT_NE(m.find("offset 20"), std::string::npos) << m;
  EXPECT_NE(m.find(SegmentPath(0)), std::string::npos) << m;
  EXPECT_NE(m.find("position " + std::to_string(pos)), std::string::npos) << m;
  EXPECT_NE(m.find(uri_), std::string::npos) << m;
  auto again = r->Read();
  EXPECT_TRUE(again.status().IsCorruption()) << "damage is never skipped";
}

TEST_F(PartitionReaderTest, MappedSegmentThatGrowsAfterAnInterruptedRollIsReadToItsNewEnd) {
  Append(100, 10);
  writer_.reset();
  // A roll that crashed right after creating its file: the reader takes
  // segment 0 for sealed and maps it.
  ASSERT_TRUE(WriteFileAtomically(FileSystem::Posix(), SegmentPath(100), "").ok());
  auto r = Reader();
  auto first = r->Read();
  ASSERT_TRUE(first.ok() && first->size() == 10u);
  // Recovery removes the empty file and appends continue in segment 0.
  auto w = topic_->OpenWriter(PartitionId(0));
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ((*w)->recovery().removed_segments.size(), 1u);
  writer_ = std::move(w).value();
  Append(150, 10);
  uint64_t n = 10;
  for (int guard = 0; guard < 100 && n < 150; ++guard) {
    auto b = r->Read(milliseconds(100));
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    for (LogRecord rec : *b) {
      ASSERT_EQ(TestRecordNumber(rec.as_string_view()), n);
      ++n;
    }
  }
  EXPECT_EQ(n, 150u);
}

// A follower that met a crashed writer's torn batch at the tail, then a new
// writer that cut it and wrote a shorter batch in its place: the follower
// must read the new batch, not keep waiting for the length the torn one
// claimed (which the file may never reach).
TEST_F(PartitionReaderTest, ATornTailCutAndWrittenAnewWithAShorterBatchIsRead) {
  Append(100, 10);
  writer_.reset();  // a crash: no close
  const std::string torn = testing::EncodeTestBatch(100, 100);
  {
    const int fd = ::open(SegmentPath(0).c_str(), O_WRONLY | O_APPEND);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, torn.data(), torn.size() / 2), static_cast<ssize_t>(torn.size() / 2));
    ::close(fd);
  }
  auto r = Reader();
  uint64_t n = 0;
  for (int guard = 0; guard < 20 && n < 100; ++guard) {
    auto b = r->Read();
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    for (LogRecord rec : *b) ASSERT_EQ(TestRecordNumber(rec.as_string_view()), n++);
  }
  ASSERT_EQ(n, 100u);
  auto at_torn = r->Read(milliseconds(20));  // the torn batch is not complete: nothing yet
  ASSERT_TRUE(at_torn.ok()) << at_torn.status().ToString();
  EXPECT_TRUE(at_torn->empty());

  auto w = topic_->OpenWriter(PartitionId(0));
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_GT((*w)->recovery().truncated_bytes, 0u);
  writer_ = std::move(w).value();
  Append(110, 10);  // far shorter than the torn batch claimed to be
  ASSERT_LT(testing::EncodeTestBatch(100, 10).size(), torn.size());
  for (int guard = 0; guard < 50 && n < 110; ++guard) {
    auto b = r->Read(milliseconds(20));
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    for (LogRecord rec : *b) ASSERT_EQ(TestRecordNumber(rec.as_string_view()), n++);
  }
  EXPECT_EQ(n, 110u) << "the follower kept waiting for the torn batch's length";
}

TEST_F(PartitionReaderTest, RecordsAreFourByteAlignedSoTokenIdsAre) {
  BatchBuilder b;
  std::string buf;
  for (int i = 0; i < 50; ++i) {
    std::vector<uint32_t> ids(i + 1, static_cast<uint32_t>(i * 1000));
    record::RecordFields fields;
    const std::string path = "file-" + std::string(i % 7, 'x');
    fields.source_path = path;
    fields.doc_seq = static_cast<uint64_t>(i);
    record::RecordEncoder enc;
    ASSERT_TRUE(enc.Prepare(fields, ids).ok());
    enc.WriteTo(b.AddUninitialized(enc.size()));
  }
  ASSERT_TRUE(writer_->Append(&b).ok());
  auto r = Reader();
  auto batch = r->Read();
  ASSERT_TRUE(batch.ok() && batch->size() == 50u);
  int i = 0;
  for (LogRecord rec : *batch) {
    auto v = record::RecordView::Parse(rec.bytes);
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    EXPECT_EQ(v->doc_seq(), static_cast<uint64_t>(i));
    EXPECT_EQ(v->ids().size(), static_cast<size_t>(i + 1));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(v->ids().data()) % v->ids().width_bytes(), 0u);
    EXPECT_EQ(v->ids()[0], static_cast<uint32_t>(i * 1000));
    ++i;
  }
}

}  // namespace
}  // namespace tokenfeed::log

namespace tokenfeed::log {
namespace {

// Overwrites 4 bytes at `position` of a file in place (same inode, same
// size), as a tool that edits a segment would.
void PokeU32(const std::string& path, uint64_t position, uint32_t value) {
  const int fd = ::open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, &value, 4, static_cast<off_t>(position)), 4);
  ::close(fd);
}

// Where record `n` of the first batch of a segment starts in its file.
uint64_t RecordPosition(const std::string& path, int n) {
  auto all = ReadFileToString(FileSystem::Posix(), path);
  uint64_t p = format::kSegmentHeaderSize + format::kBatchHeaderSize;
  for (int i = 0; i < n; ++i) {
    uint32_t len;
    std::memcpy(&len, all->data() + p, 4);
    p += format::EntrySize(len);
  }
  return p;
}

// A batch checked once is read again from its header only; when the bytes
// under that unchanged header changed since, the walk to the sought record
// and over the records must stay inside the batch: from a map (sealed
// segment 0) and through the buffer (active segment 300).
TEST_F(PartitionReaderTest, BytesChangedUnderACheckedHeaderNeverLeadOutsideTheBatch) {
  Append(300, 300);
  Append(600, 300);  // one batch per segment
  ASSERT_EQ(topic_->Describe()->partitions[0].segment_count, 2u);
  auto r = Reader();
  for (int i = 0; i < 2; ++i) {
    auto b = r->Read();
    ASSERT_TRUE(b.ok() && b->size() == 300u);
  }
  const uint64_t batch_length = FileSystem::Posix()->Stat(SegmentPath(300))->size - format::kSegmentHeaderSize;
  // Record 100 of each batch now claims 256 MiB.
  PokeU32(SegmentPath(0), RecordPosition(SegmentPath(0), 100), 256u << 20);
  PokeU32(SegmentPath(300), RecordPosition(SegmentPath(300), 100), 256u << 20);
  for (uint64_t target : {90u, 100u, 130u, 299u, 390u, 400u, 430u, 599u}) {
    ASSERT_TRUE(r->Seek(Offset(target)).ok());
    auto again = r->Read();
    if (!again.ok()) continue;  // a reader may also notice the change and report it
    for (LogRecord rec : *again) {
      EXPECT_LE(rec.bytes.size(), batch_length) << "sought " << target << ", record " << rec.offset.value();
    }
  }
}

}  // namespace
}  // namespace tokenfeed::log
