// A batch header is 40 bytes and its own checksum is easy to forge: a 4 KiB
// segment whose last batch claims 1 GiB must not make a reader, a tail scan
// or writer recovery allocate 1 GiB. This binary replaces the global
// operator new[] to note the largest array allocated, so it is a program of
// its own (the rest of the log tests allocate as they please).
#include <atomic>
#include <cstdlib>
#include <new>

#include <gtest/gtest.h>

#include "base/crc32c.h"
#include "base/little_endian.h"
#include "base/scoped_temp_dir.h"
#include "log/log_format.h"
#include "log/segment_reader.h"
#include "log/test_records.h"
#include "log/log.h"

namespace {
std::atomic<size_t> largest_array{0};
}  // namespace

void* operator new[](size_t n) {
  size_t seen = largest_array.load();
  while (n > seen && !largest_array.compare_exchange_weak(seen, n)) {
  }
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }

namespace tokenfeed::log {
namespace {

namespace f = format;
constexpr size_t kLimit = size_t{64} << 20;  // far above any buffer these reads need, far below 1 GiB

// A valid batch header (its checksum matches) that claims `length` bytes.
std::string ForgedHeader(uint64_t base, uint32_t length) {
  std::string h(f::kBatchHeaderSize, '\0');
  f::BatchHeader header;
  header.batch_length = length;
  header.record_count = 1;
  header.base_offset = Offset(base);
  f::EncodeBatchHeader(header, reinterpret_cast<uint8_t*>(h.data()));
  return h;
}

class ForgedLengthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto t = TopicDirectory::Create(uri_, {});
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    topic_ = std::move(t).value();
    auto w = topic_->OpenWriter(PartitionId(0));
    ASSERT_TRUE(w.ok());
    BatchBuilder b;
    testing::FillTestBatch(&b, 0, 10);
    ASSERT_TRUE((*w)->Append(&b).ok());
    ASSERT_TRUE((*w)->Close().ok());
    // The forged batch, then filler up to 4 KiB of file.
    auto file = FileSystem::Posix()->OpenWritable(segment_, FileSystem::WriteMode::kAppend);
    ASSERT_TRUE(file.ok());
    std::string tail = ForgedHeader(10, (uint32_t{1} << 30) - 4);
    tail.resize(4096 - (*file)->Size(), 'x');
    ASSERT_TRUE((*file)->Append({reinterpret_cast<const uint8_t*>(tail.data()), tail.size()}).ok());
    ASSERT_TRUE((*file)->Close().ok());
    largest_array = 0;
  }

  ScopedTempDir dir_;
  std::string uri_ = "log:" + dir_.Join("t");
  std::string segment_ = dir_.Join("t/partition-00000/") + f::SegmentFileName(Offset(0));
  std::unique_ptr<TopicDirectory> topic_;
};

TEST_F(ForgedLengthTest, SegmentReaderChecksTheFileSizeFirst) {
  for (auto access : {SegmentReader::Access::kRead, SegmentReader::Access::kMap}) {
    auto r = SegmentReader::Open(FileSystem::Posix(), segment_, Offset(0), 1 << 20, access);
    ASSERT_TRUE(r.ok());
    SegmentReader::Batch b;
    uint64_t pos = f::kSegmentHeaderSize;
    ASSERT_EQ(*(*r)->ReadAt(pos, SegmentReader::Check::kChecksum, &b), SegmentReader::Outcome::kBatch);
    pos += b.header.batch_length;
    for (auto check : {SegmentReader::Check::kRecords, SegmentReader::Check::kChecksum, SegmentReader::Check::kHeader}) {
      EXPECT_EQ(*(*r)->ReadAt(pos, check, &b), SegmentReader::Outcome::kIncomplete);
    }
    auto next = (*r)->FindNextValidBatch(f::kSegmentHeaderSize + 1);
    ASSERT_TRUE(next.ok());
    EXPECT_FALSE(next->has_value());
  }
  EXPECT_LT(largest_array.load(), kLimit);
}

TEST_F(ForgedLengthTest, ReadersTailScansAndRecoveryAllocateLittle) {
  auto r = topic_->OpenReader(PartitionId(0));
  ASSERT_TRUE(r.ok());
  uint64_t seen = 0;
  for (int i = 0; i < 3; ++i) {
    auto b = (*r)->Read();
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    seen += b->size();
  }
  EXPECT_EQ(seen, 10u);
  auto d = topic_->Describe();
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->partitions[0].end_offset, Offset(10));
  EXPECT_LT(largest_array.load(), kLimit) << "readers";
  auto w = topic_->OpenWriter(PartitionId(0));
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ((*w)->end_offset(), Offset(10));
  EXPECT_LT(largest_array.load(), kLimit) << "writer recovery";
}

}  // namespace
}  // namespace tokenfeed::log
