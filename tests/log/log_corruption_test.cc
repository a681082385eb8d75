// Damage that is not a torn tail is never skipped silently: readers stop with
// Corruption naming topic, partition, segment file, file position and offset;
// the writer refuses to open over damage in its last segment.
#include <cstring>

#include <gtest/gtest.h>

#include "base/scoped_temp_dir.h"
#include "log/log_format.h"
#include "log/test_records.h"
#include "log/log.h"

namespace tokenfeed::log {
namespace {

using testing::FillTestBatch;

class LogCorruptionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TopicOptions options;
    options.segment_bytes = 8 << 10;
    auto t = TopicDirectory::Create(uri_, options);
    ASSERT_TRUE(t.ok());
    topic_ = std::move(t).value();
    auto w = topic_->OpenWriter(PartitionId(0));
    ASSERT_TRUE(w.ok());
    BatchBuilder b;
    while ((*w)->end_offset().value() < 1000) {
      FillTestBatch(&b, (*w)->end_offset().value(), 20);
      ASSERT_TRUE((*w)->Append(&b).ok());
    }
    ASSERT_TRUE((*w)->Close().ok());
    auto names = FileSystem::Posix()->ListDir(pdir_);
    for (const std::string& n : *names) {
      if (auto base = format::ParseSegmentFileName(n)) segments_.push_back(base->value());
    }
    ASSERT_GT(segments_.size(), 3u);
  }

  std::string Seg(uint64_t base) { return pdir_ + "/" + format::SegmentFileName(Offset(base)); }

  // Flips one byte in the records of the batch that holds `batch_number`
  // (counting batches from the start of segment `base`); returns the batch's
  // file position and base offset.
  std::pair<uint64_t, uint64_t> DamageBatch(uint64_t base, int batch_number) {
    std::string bytes = *ReadFileToString(FileSystem::Posix(), Seg(base));
    uint64_t pos = format::kSegmentHeaderSize;
    uint64_t offset = base;
    for (int i = 0; i < batch_number; ++i) {
      uint32_t len, count;
      std::memcpy(&len, bytes.data() + pos + 8, 4);
      std::memcpy(&count, bytes.data() + pos + 12, 4);
      pos += len;
      offset += count;
    }
    bytes[pos + format::kBatchHeaderSize + 9] ^= 0x20;
    EXPECT_TRUE(WriteFileAtomically(FileSystem::Posix(), Seg(base), bytes).ok());
    return {pos, offset};
  }

  Status ReadUntilError(uint64_t* seen) {
    auto r = topic_->OpenReader(PartitionId(0));
    if (!r.ok()) return r.status();
    *seen = 0;
    for (int guard = 0; guard < 10000; ++guard) {
      auto b = (*r)->Read();
      if (!b.ok()) return b.status();
      if (b->empty()) return Status::OK();
      *seen += b->size();
    }
    return Status::Internal("too many batches");
  }

  void ExpectNamed(const Status& s, uint64_t base, uint64_t position, uint64_t offset) {
    ASSERT_TRUE(s.IsCorruption()) << s.ToString();
    const std::string& m = s.message();
    EXPECT_NE(m.find(uri_), std::string::npos) << m;
    EXPECT_NE(m.find("partition 0"), std::string::npos) << m;
    EXPECT_NE(m.find(Seg(base)), std::string::npos) << m;
    EXPECT_NE(m.find("position " + std::to_string(position)), std::string::npos) << m;
    EXPECT_NE(m.find("offset " + std::to_string(offset)), std::string::npos) << m;
  }

  ScopedTempDir dir_;
  std::string uri_ = "log:" + dir_.Join("c");
  std::string pdir_ = dir_.Join("c/partition-00000");
  std::unique_ptr<TopicDirectory> topic_;
  std::vector<uint64_t> segments_;
};

TEST_F(LogCorruptionTest, DamageInASealedSegmentStopsReaders) {
  const uint64_t base = segments_[1];
  auto [pos, offset] = DamageBatch(base, 1);
  uint64_t seen = 0;
  Status s = ReadUntilError(&seen);
  ExpectNamed(s, base, pos, offset);
  EXPECT_EQ(seen, offset) << "everything before the damage was delivered, nothing after";

  // A reader that seeks past the damage reads on: the damage is reported
  // where it is, not spread.
  auto r = topic_->OpenReader(PartitionId(0));
  ASSERT_TRUE((*r)->Seek(Offset(segments_[2])).ok());
  auto b = (*r)->Read();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_FALSE(b->empty());
}

TEST_F(LogCorruptionTest, DamageInTheLastSegmentStopsReadersAndTheWriter) {
  const uint64_t base = segments_.back();
  auto [pos, offset] = DamageBatch(base, 0);
  uint64_t seen = 0;
  ExpectNamed(ReadUntilError(&seen), base, pos, offset);
  auto w = topic_->OpenWriter(PartitionId(0));
  if (w.ok()) {
    // Only possible when the damaged batch is the segment's last one: then
    // it is indistinguishable from a torn write and is cut.
    EXPECT_FALSE((*w)->recovery().clean());
    EXPECT_EQ((*w)->end_offset(), Offset(offset));
  } else {
    ExpectNamed(w.status(), base, pos, offset);
  }
}

TEST_F(LogCorruptionTest, MissingSegmentIsReportedAsAGap) {
  ASSERT_TRUE(FileSystem::Posix()->RemoveFile(Seg(segments_[2])).ok());
  auto r = topic_->OpenReader(PartitionId(0));
  ASSERT_TRUE(r.ok());
  Status error;
  uint64_t seen = 0;
  for (int guard = 0; guard < 1000; ++guard) {
    auto b = (*r)->Read(std::chrono::milliseconds(10));
    if (!b.ok()) {
      error = b.status();
      break;
    }
    seen += b->size();
  }
  ASSERT_TRUE(error.IsCorruption()) << error.ToString();
  EXPECT_NE(error.message().find("records are missing"), std::string::npos) << error.ToString();
  EXPECT_NE(error.message().find("offset " + std::to_string(segments_[2])), std::string::npos) << error.ToString();
  EXPECT_EQ(seen, segments_[2]);
}

}  // namespace
}  // namespace tokenfeed::log
