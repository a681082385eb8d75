// Walks over a batch's entries (to a sought record, over its records, to
// place marks) stay inside its bytes even when those bytes changed after the
// batch was checked, under a header that did not change.
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/little_endian.h"
#include "log/batch_access.h"
#include "log/log_format.h"
#include "log/test_records.h"

namespace tokenfeed::log {
namespace {

namespace f = format;

class ChangedBytesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string batch = testing::EncodeTestBatch(0, 300);
    // Guard bytes around the batch: a walk that leaves the batch lands there.
    memory_.assign(batch.size() + 2 * kGuard, 0xee);
    std::memcpy(memory_.data() + kGuard, batch.data(), batch.size());
    bytes_ = {memory_.data() + kGuard, batch.size()};
    ASSERT_EQ(f::DecodeBatchHeader(bytes_.data(), &header_), "");
    ASSERT_EQ(f::CheckBatchBody(bytes_, header_, true), "");
    marks_ = BatchViewAccess::MarkEntries(bytes_, header_);
    // Where record 100 starts, then its length field is made to claim more
    // than the batch holds.
    const uint8_t* p = bytes_.data() + f::kBatchHeaderSize;
    for (int i = 0; i < 100; ++i) p += f::EntrySize(LoadLittleEndian<uint32_t>(p));
    record_100_ = const_cast<uint8_t*>(p);
  }

  void ExpectInside(const BatchView& v, std::span<const uint8_t> within) {
    uint32_t n = 0;
    for (LogRecord r : v) {
      ASSERT_LE(++n, v.size()) << "the walk yields at most the view's records";
      if (r.bytes.empty()) continue;
      EXPECT_GE(r.bytes.data(), within.data());
      EXPECT_LE(r.bytes.data() + r.bytes.size(), within.data() + within.size())
          << "record at offset " << r.offset.value();
    }
  }

  static constexpr size_t kGuard = 1 << 16;
  std::vector<uint8_t> memory_;
  std::span<uint8_t> bytes_;
  f::BatchHeader header_;
  std::vector<uint32_t> marks_;
  uint8_t* record_100_ = nullptr;
};

TEST_F(ChangedBytesTest, AViewOverRecordsWhoseLengthGrewStaysInside) {
  for (uint32_t claim : {uint32_t{5000}, uint32_t{1} << 20, uint32_t{0x7fffffff}}) {
    StoreLittleEndian<uint32_t>(record_100_, claim);
    ExpectInside(BatchViewAccess::Make(bytes_, header_, 0), bytes_);
    ExpectInside(BatchViewAccess::Make(bytes_, header_, 90, marks_), bytes_);
    // The walk to the sought record crosses the changed entry.
    ExpectInside(BatchViewAccess::Make(bytes_, header_, 150, marks_), bytes_);
    ExpectInside(BatchViewAccess::Make(bytes_, header_, 150), bytes_);
    // A part that starts at a mark before the changed entry.
    const std::span<const uint8_t> part = std::span<const uint8_t>(bytes_).subspan(marks_[1], marks_[3] - marks_[1]);
    ExpectInside(BatchViewAccess::MakePart(part, 64, 192, header_, 120), part);
    EXPECT_LE(BatchViewAccess::MarkEntries(bytes_, header_).size(), marks_.size());
  }
}

TEST_F(ChangedBytesTest, UnchangedBytesWalkAsBefore) {
  BatchView v = BatchViewAccess::Make(bytes_, header_, 150, marks_);
  uint64_t n = 150;
  for (LogRecord r : v) EXPECT_EQ(testing::TestRecordNumber(r.as_string_view()), n++);
  EXPECT_EQ(n, 300u);
}

// The size a writer checks before reserving a record in place: the entry's
// length field and padding counted, and no overflow for absurd sizes.
TEST(BatchBuilderTest, SizeWithARecordCountsItsEntryAndNeverWraps) {
  BatchBuilder b;
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.size_bytes(), f::kBatchHeaderSize);
  EXPECT_EQ(b.size_bytes_with(0), f::kBatchHeaderSize + 4);
  EXPECT_EQ(b.size_bytes_with(5), f::kBatchHeaderSize + 12);
  uint8_t* p = b.AddUninitialized(5);
  std::memcpy(p, "hello", 5);
  EXPECT_EQ(b.size_bytes(), f::kBatchHeaderSize + 12);
  EXPECT_EQ(b.size_bytes_with(4), f::kBatchHeaderSize + 12 + 8);
  EXPECT_GT(b.size_bytes_with(BatchBuilder::kMaxBytes + 1), BatchBuilder::kMaxBytes);
  EXPECT_GT(b.size_bytes_with(SIZE_MAX), BatchBuilder::kMaxBytes);
  EXPECT_GT(b.size_bytes_with(SIZE_MAX - 2), BatchBuilder::kMaxBytes);
  b.Clear();
  EXPECT_EQ(b.size_bytes(), f::kBatchHeaderSize);
  EXPECT_EQ(b.record_count(), 0u);
}

TEST(BatchBuilderTest, RecordsWalksWhatWasAddedInOrder) {
  BatchBuilder b;
  EXPECT_TRUE(b.records().empty());
  testing::FillTestBatch(&b, 0, 100);
  b.Add(std::string_view());  // an empty record among them
  std::vector<std::string> seen;
  for (const LogRecord& r : b.records()) {
    EXPECT_EQ(r.offset.value(), seen.size());
    seen.emplace_back(r.as_string_view());
  }
  ASSERT_EQ(seen.size(), 101u);
  for (uint64_t n = 0; n < 100; ++n) EXPECT_EQ(seen[n], testing::TestRecord(n));
  EXPECT_EQ(seen[100], "");
  b.Clear();
  EXPECT_TRUE(b.records().empty());
}

}  // namespace
}  // namespace tokenfeed::log
