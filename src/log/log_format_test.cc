#include "log/log_format.h"

#include <vector>

#include <gtest/gtest.h>

#include "base/crc32c.h"
#include "base/little_endian.h"
#include "log/batch_access.h"
#include "log/log_batch.h"

namespace tokenfeed::log::format {
namespace {

TEST(LogFormatTest, Names) {
  EXPECT_EQ(PartitionDirName(PartitionId(3)), "partition-00003");
  EXPECT_EQ(SegmentFileName(Offset(1234)), "00000000000000001234.seg");
  EXPECT_EQ(IndexFileName(Offset(0)), "00000000000000000000.idx");
  EXPECT_EQ(ParseSegmentFileName("00000000000000001234.seg"), Offset(1234));
  EXPECT_EQ(ParseSegmentFileName("18446744073709551615.seg"), Offset(UINT64_MAX));
  EXPECT_EQ(ParseSegmentFileName("18446744073709551616.seg"), std::nullopt) << "overflow";
  EXPECT_EQ(ParseSegmentFileName("0000000000000000123.seg"), std::nullopt) << "19 digits";
  EXPECT_EQ(ParseSegmentFileName("00000000000000001234.idx"), std::nullopt);
  EXPECT_EQ(ParseSegmentFileName("0000000000000000x234.seg"), std::nullopt);
}

TEST(LogFormatTest, FileHeaderRoundTripAndChecks) {
  uint8_t h[kSegmentHeaderSize];
  EncodeFileHeader(kSegmentMagic, kSegmentVersion, Offset(77), h);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(h), 8), "TFLOGSEG");
  EXPECT_EQ(CheckFileHeader(kSegmentMagic, kSegmentVersion, Offset(77), h), "");
  EXPECT_NE(CheckFileHeader(kSegmentMagic, kSegmentVersion, Offset(78), h).find("name says 78"), std::string::npos);
  EXPECT_NE(CheckFileHeader(kIndexMagic, kIndexVersion, Offset(77), h), "");
  h[20] ^= 1;
  EXPECT_NE(CheckFileHeader(kSegmentMagic, kSegmentVersion, Offset(77), h).find("checksum"), std::string::npos);
}

TEST(LogFormatTest, BatchHeaderRoundTrip) {
  BatchHeader h;
  h.batch_length = 48;
  h.record_count = 1;
  h.base_offset = Offset(1ull << 40);
  h.append_time_unix_ms = 1700000000123;
  h.data_crc = 0xdeadbeef;
  uint8_t buf[kBatchHeaderSize];
  EncodeBatchHeader(h, buf);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(buf), 4), "TFB1");
  BatchHeader d;
  ASSERT_EQ(DecodeBatchHeader(buf, &d), "");
  EXPECT_EQ(d.batch_length, 48u);
  EXPECT_EQ(d.record_count, 1u);
  EXPECT_EQ(d.base_offset, Offset(1ull << 40));
  EXPECT_EQ(d.append_time_unix_ms, 1700000000123);
  EXPECT_EQ(d.data_crc, 0xdeadbeefu);
  EXPECT_EQ(d.end_offset(), Offset((1ull << 40) + 1));
}

TEST(LogFormatTest, EveryHeaderBitFlipIsDetected) {
  BatchHeader h;
  h.batch_length = 48;
  h.record_count = 1;
  uint8_t buf[kBatchHeaderSize];
  EncodeBatchHeader(h, buf);
  for (size_t byte = 0; byte < kBatchHeaderSize; ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      uint8_t copy[kBatchHeaderSize];
      std::memcpy(copy, buf, sizeof(copy));
      copy[byte] ^= static_cast<uint8_t>(1 << bit);
      BatchHeader d;
      EXPECT_NE(DecodeBatchHeader(copy, &d), "") << "byte " << byte << " bit " << bit;
    }
  }
}

TEST(LogFormatTest, HeaderWithImpossibleLengthIsRejectedEvenWithGoodChecksum) {
  BatchHeader h;
  h.batch_length = 42;  // not a multiple of 4
  h.record_count = 1;
  uint8_t buf[kBatchHeaderSize];
  EncodeBatchHeader(h, buf);
  BatchHeader d;
  EXPECT_NE(DecodeBatchHeader(buf, &d).find("impossible length"), std::string::npos);
  h.batch_length = 48;
  h.record_count = 0;
  EncodeBatchHeader(h, buf);
  EXPECT_NE(DecodeBatchHeader(buf, &d), "");
  h.record_count = 1;
  h.flags = 4;
  EncodeBatchHeader(h, buf);
  EXPECT_NE(DecodeBatchHeader(buf, &d).find("flags"), std::string::npos);
}

// Builds a batch the way the writer does: header filled into the builder.
std::vector<uint8_t> MakeBatch(const std::vector<std::string>& records, BatchHeader* h) {
  BatchBuilder b;
  for (const auto& r : records) b.Add(r);
  auto bytes = BatchBuilderAccess::Bytes(b);
  h->batch_length = static_cast<uint32_t>(bytes.size());
  h->record_count = b.record_count();
  h->base_offset = Offset(10);
  h->data_crc = crc32c::Value(bytes.data() + kBatchHeaderSize, bytes.size() - kBatchHeaderSize);
  EncodeBatchHeader(*h, bytes.data());
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

TEST(LogFormatTest, BatchBodyChecksAndView) {
  BatchHeader h;
  const std::vector<std::string> records = {"a", "", "hello", std::string(1000, 'x')};
  std::vector<uint8_t> batch = MakeBatch(records, &h);
  EXPECT_EQ(batch.size(), kBatchHeaderSize + EntrySize(1) + EntrySize(0) + EntrySize(5) + EntrySize(1000));
  EXPECT_EQ(batch.size() % 4, 0u);
  ASSERT_EQ(CheckBatchBody(batch, h, true), "");
  BatchView v = BatchViewAccess::Make(batch, h, 0);
  EXPECT_EQ(v.size(), 4u);
  std::vector<std::string> got;
  Offset expect(10);
  for (LogRecord r : v) {
    EXPECT_EQ(r.offset, expect);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(r.bytes.data()) % 4, reinterpret_cast<uintptr_t>(batch.data()) % 4)
        << "records sit at 4-aligned positions of the batch";
    expect += 1;
    got.emplace_back(r.as_string_view());
  }
  EXPECT_EQ(got, records);
  BatchView skipped = BatchViewAccess::Make(batch, h, 2);
  EXPECT_EQ(skipped.first_offset(), Offset(12));
  EXPECT_EQ(skipped.size(), 2u);
  EXPECT_EQ((*skipped.begin()).as_string_view(), "hello");

  std::vector<uint8_t> damaged = batch;
  damaged[kBatchHeaderSize + 5] ^= 0x10;
  EXPECT_NE(CheckBatchBody(damaged, h, true).find("checksum"), std::string::npos);
  EXPECT_EQ(CheckBatchBody(damaged, h, false), "") << "without the CRC only the structure is checked";

  BatchHeader wrong_count = h;
  wrong_count.record_count = 3;
  EXPECT_NE(CheckBatchBody(batch, wrong_count, false).find("holds 4"), std::string::npos);
}

}  // namespace
}  // namespace tokenfeed::log::format
