#include "log/segment_reader.h"

#include <gtest/gtest.h>

#include "base/scoped_temp_dir.h"
#include "log/log_format.h"
#include "log/test_records.h"

namespace tokenfeed::log {
namespace {

using Outcome = SegmentReader::Outcome;
using Access = SegmentReader::Access;

std::string Header(Offset base, uint32_t version = format::kSegmentVersion) {
  std::string h(format::kSegmentHeaderSize, '\0');
  format::EncodeFileHeader(format::kSegmentMagic, version, base, reinterpret_cast<uint8_t*>(h.data()));
  return h;
}

class SegmentReaderTest : public ::testing::TestWithParam<Access> {
 protected:
  std::unique_ptr<SegmentReader> Open(const std::string& contents, Offset base = Offset(0)) {
    EXPECT_TRUE(WriteFileAtomically(FileSystem::Posix(), path_, contents).ok());
    auto r = SegmentReader::Open(FileSystem::Posix(), path_, base, 4096, GetParam());
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::move(r).value() : nullptr;
  }
  ScopedTempDir dir_;
  std::string path_ = dir_.Join("00000000000000000000.seg");
};

TEST_P(SegmentReaderTest, OutcomesAtEachKindOfTail) {
  const std::string b0 = testing::EncodeTestBatch(0, 3);
  const std::string b1 = testing::EncodeTestBatch(3, 200);  // larger than the 4 KiB buffer
  auto r = Open(Header(Offset(0)) + b0 + b1 + b0.substr(0, 30));
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->header_problem(), "");
  EXPECT_EQ(r->mapped(), GetParam() == Access::kMap);
  SegmentReader::Batch batch;
  uint64_t pos = format::kSegmentHeaderSize;
  ASSERT_EQ(*r->ReadAt(pos, SegmentReader::Check::kChecksum, &batch), Outcome::kBatch);
  EXPECT_EQ(batch.header.record_count, 3u);
  EXPECT_EQ(batch.bytes.size(), b0.size());
  pos += b0.size();
  ASSERT_EQ(*r->ReadAt(pos, SegmentReader::Check::kChecksum, &batch), Outcome::kBatch) << r->problem();
  EXPECT_EQ(batch.header.base_offset, Offset(3));
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(batch.bytes.data()), batch.bytes.size()), b1);
  pos += b1.size();
  EXPECT_EQ(*r->ReadAt(pos, SegmentReader::Check::kChecksum, &batch), Outcome::kIncomplete) << "30 bytes: a header cut short";
  EXPECT_EQ(*r->ReadAt(pos + 30, SegmentReader::Check::kChecksum, &batch), Outcome::kEnd);
}

TEST_P(SegmentReaderTest, DamageAndTheSearchForTheNextValidBatch) {
  const std::string b0 = testing::EncodeTestBatch(0, 3);
  std::string b1 = testing::EncodeTestBatch(3, 5);
  const std::string b2 = testing::EncodeTestBatch(8, 2);
  b1[format::kBatchHeaderSize + format::kEntryLengthSize + 1] ^= 1;  // inside the first record
  auto r = Open(Header(Offset(0)) + b0 + b1 + b2);
  SegmentReader::Batch batch;
  const uint64_t p1 = format::kSegmentHeaderSize + b0.size();
  EXPECT_EQ(*r->ReadAt(p1, SegmentReader::Check::kChecksum, &batch), Outcome::kDamaged);
  EXPECT_NE(r->problem().find("checksum"), std::string::npos);
  EXPECT_EQ(*r->ReadAt(p1, SegmentReader::Check::kRecords, &batch), Outcome::kBatch) << "only the CRC was damaged";
  auto next = r->FindNextValidBatch(p1 + 1);
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(*next, p1 + b1.size());
  auto none = r->FindNextValidBatch(p1 + b1.size() + 1);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST_P(SegmentReaderTest, EachCheckLevelCatchesWhatItChecks) {
  const std::string b0 = testing::EncodeTestBatch(0, 3);
  std::string b1 = testing::EncodeTestBatch(3, 5);
  // The first record's length claims more bytes than the batch holds: the
  // header (and its checksum) stay intact, the record entries do not.
  b1[format::kBatchHeaderSize + 3] = '\x7f';
  auto r = Open(Header(Offset(0)) + b0 + b1);
  SegmentReader::Batch batch;
  const uint64_t p1 = format::kSegmentHeaderSize + b0.size();
  EXPECT_EQ(*r->ReadAt(p1, SegmentReader::Check::kChecksum, &batch), Outcome::kDamaged);
  EXPECT_EQ(*r->ReadAt(p1, SegmentReader::Check::kRecords, &batch), Outcome::kDamaged);
  EXPECT_NE(r->problem().find("past the end of the batch"), std::string::npos) << r->problem();
  ASSERT_EQ(*r->ReadAt(p1, SegmentReader::Check::kHeader, &batch), Outcome::kBatch) << r->problem();
  EXPECT_EQ(batch.header.base_offset, Offset(3));
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(batch.bytes.data()), batch.bytes.size()), b1);
  ASSERT_EQ(*r->ReadAt(p1, SegmentReader::Check::kPresence, &batch), Outcome::kBatch) << r->problem();
  EXPECT_EQ(batch.header.record_count, 5u);
  EXPECT_TRUE(batch.bytes.empty()) << "a presence check reads no data";
  // Both still need every byte of the batch in the file.
  auto cut = Open(Header(Offset(0)) + b0 + b1.substr(0, b1.size() - 4));
  EXPECT_EQ(*cut->ReadAt(p1, SegmentReader::Check::kHeader, &batch), Outcome::kIncomplete);
  EXPECT_EQ(*cut->ReadAt(p1, SegmentReader::Check::kPresence, &batch), Outcome::kIncomplete);
  EXPECT_NE(cut->problem().find("not all in the file"), std::string::npos) << cut->problem();
  EXPECT_EQ(*cut->ReadAt(0 + format::kSegmentHeaderSize, SegmentReader::Check::kPresence, &batch), Outcome::kBatch);
}

TEST_P(SegmentReaderTest, HeaderProblems) {
  auto short_file = Open("TFLOG");
  EXPECT_NE(short_file->header_problem().find("too short"), std::string::npos);
  auto wrong_base = Open(Header(Offset(5)));
  EXPECT_NE(wrong_base->header_problem().find("base offset 5"), std::string::npos);
  ASSERT_TRUE(WriteFileAtomically(FileSystem::Posix(), path_, Header(Offset(0), 2)).ok());
  Status newer = SegmentReader::Open(FileSystem::Posix(), path_, Offset(0), 4096, GetParam()).status();
  EXPECT_EQ(newer.code(), StatusCode::kUnsupported);
  EXPECT_NE(newer.message().find("version 2"), std::string::npos) << newer.ToString();
}

INSTANTIATE_TEST_SUITE_P(Access, SegmentReaderTest, ::testing::Values(Access::kRead, Access::kMap),
                         [](const ::testing::TestParamInfo<Access>& i) {
                           return i.param == Access::kMap ? "Mapped" : "Pread";
                         });

}  // namespace
}  // namespace tokenfeed::log
