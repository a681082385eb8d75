#include "log/segment_index.h"

#include <gtest/gtest.h>

#include "base/scoped_temp_dir.h"

namespace tokenfeed::log {
namespace {

TEST(SegmentIndexTest, EncodeLoadFind) {
  ScopedTempDir dir;
  FileSystem* fs = FileSystem::Posix();
  const Offset base(100);
  const std::vector<IndexEntry> entries = {{Offset(150), 70000}, {Offset(220), 140000}, {Offset(300), 210000}};
  const std::string path = dir.Join("i.idx");
  ASSERT_TRUE(WriteFileAtomically(fs, path, SegmentIndex::Encode(base, entries)).ok());
  auto index = SegmentIndex::Load(fs, path, base);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  ASSERT_EQ(index->entries().size(), 3u);
  EXPECT_EQ(index->entries()[1].offset, Offset(220));
  EXPECT_EQ(index->entries()[1].position, 140000u);
  EXPECT_FALSE(index->Find(Offset(149)).has_value());
  EXPECT_EQ(index->Find(Offset(150))->position, 70000u);
  EXPECT_EQ(index->Find(Offset(299))->position, 140000u);
  EXPECT_EQ(index->Find(Offset(100000))->position, 210000u);
  EXPECT_FALSE(SegmentIndex::Load(fs, path, Offset(101)).ok()) << "header names another base offset";
}

TEST(SegmentIndexTest, PartialTrailingEntryIsDropped) {
  ScopedTempDir dir;
  FileSystem* fs = FileSystem::Posix();
  std::string bytes = SegmentIndex::Encode(Offset(0), {{Offset(5), 100}, {Offset(9), 200}});
  bytes.resize(bytes.size() - 3);
  ASSERT_TRUE(WriteFileAtomically(fs, dir.Join("i"), bytes).ok());
  auto index = SegmentIndex::Load(fs, dir.Join("i"), Offset(0));
  ASSERT_TRUE(index.ok());
  EXPECT_EQ(index->entries().size(), 1u);
}

TEST(SegmentIndexTest, DamageIsCorruption) {
  ScopedTempDir dir;
  FileSystem* fs = FileSystem::Posix();
  ASSERT_TRUE(WriteFileAtomically(fs, dir.Join("dec"), SegmentIndex::Encode(Offset(0), {{Offset(9), 200}, {Offset(5), 300}})).ok());
  EXPECT_TRUE(SegmentIndex::Load(fs, dir.Join("dec"), Offset(0)).status().IsCorruption());
  std::string bytes = SegmentIndex::Encode(Offset(0), {});
  bytes[3] ^= 1;
  ASSERT_TRUE(WriteFileAtomically(fs, dir.Join("hdr"), bytes).ok());
  EXPECT_TRUE(SegmentIndex::Load(fs, dir.Join("hdr"), Offset(0)).status().IsCorruption());
  EXPECT_TRUE(SegmentIndex::Load(fs, dir.Join("missing"), Offset(0)).status().IsNotFound());
}

}  // namespace
}  // namespace tokenfeed::log
