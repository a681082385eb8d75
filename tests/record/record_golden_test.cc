// Compatibility: the committed version-1 record files (written by an
// independent Python implementation of docs/record_format.md, see
// testdata/make_golden.py) must decode to the documented fields, and the C++
// encoder must reproduce them byte for byte. Version 2 must be refused.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tokenfeed/record.h"

namespace tokenfeed::record {
namespace {

std::string ReadGolden(const std::string& name) {
  const std::string path = std::string(TOKENFEED_SOURCE_DIR) + "/tests/record/testdata/" + name;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing golden file " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<uint32_t> Ids(const RecordView& v) {
  std::vector<uint32_t> out(v.ids().size());
  v.ids().CopyTo(out.data());
  return out;
}

void ExpectEncoderReproduces(const std::string& golden, const RecordFields& fields, const std::vector<uint32_t>& ids) {
  std::string encoded;
  ASSERT_TRUE(EncodeRecord(fields, ids, &encoded).ok());
  EXPECT_EQ(encoded, golden) << "the encoder no longer writes the version-1 bytes";
}

TEST(RecordGoldenTest, V1Sixteen) {
  const std::string bytes = ReadGolden("v1_u16_plain.bin");
  ASSERT_EQ(bytes.size(), 70u);
  auto v = RecordView::Parse(bytes);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->version(), 1);
  EXPECT_EQ(v->source_path(), "docs/wiki-en-0003.txt");
  EXPECT_EQ(v->source_line(), 17u);
  EXPECT_EQ(v->source_byte_offset(), 123456u);
  EXPECT_EQ(v->doc_seq(), 42u);
  EXPECT_EQ(v->ids().width_bytes(), 2u);
  const std::vector<uint32_t> ids = {0, 1, 2, 50256, 65535};
  EXPECT_EQ(Ids(*v), ids);
  RecordFields fields;
  fields.source_path = "docs/wiki-en-0003.txt";
  fields.source_line = 17;
  fields.source_byte_offset = 123456;
  fields.doc_seq = 42;
  ExpectEncoderReproduces(bytes, fields, ids);
}

TEST(RecordGoldenTest, V1ThirtyTwoWithAttributes) {
  const std::string bytes = ReadGolden("v1_u32_attributes.bin");
  auto v = RecordView::Parse(bytes);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->source_path(), "/data/c4/c4-train.00007-of-01024.json.gz");
  EXPECT_EQ(v->source_line(), 1u);
  EXPECT_EQ(v->source_byte_offset(), 0u);
  EXPECT_EQ(v->doc_seq(), 0u);
  EXPECT_EQ(v->ids().width_bytes(), 4u);
  const std::vector<uint32_t> ids = {100000, 7, 65536, 4294967295u};
  EXPECT_EQ(Ids(*v), ids);
  EXPECT_EQ(v->FindAttribute("src"), "c4");
  EXPECT_EQ(v->FindAttribute("lang"), "en");
  const Attribute attrs[] = {{"src", "c4"}, {"lang", "en"}};
  RecordFields fields;
  fields.source_path = "/data/c4/c4-train.00007-of-01024.json.gz";
  fields.source_line = 1;
  fields.attributes = attrs;
  ExpectEncoderReproduces(bytes, fields, ids);
}

TEST(RecordGoldenTest, V1EmptyWithFullWidthNumbers) {
  const std::string bytes = ReadGolden("v1_empty_ids.bin");
  auto v = RecordView::Parse(bytes);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->source_path(), "");
  EXPECT_EQ(v->source_line(), (uint64_t{1} << 40) + 3);
  EXPECT_EQ(v->source_byte_offset(), (uint64_t{1} << 63) + 5);
  EXPECT_EQ(v->doc_seq(), UINT64_MAX);
  EXPECT_TRUE(v->ids().empty());
  RecordFields fields;
  fields.source_line = (uint64_t{1} << 40) + 3;
  fields.source_byte_offset = (uint64_t{1} << 63) + 5;
  fields.doc_seq = UINT64_MAX;
  ExpectEncoderReproduces(bytes, fields, {});
}

TEST(RecordGoldenTest, Version2IsRefusedClearly) {
  const std::string bytes = ReadGolden("v2_future.bin");
  ASSERT_FALSE(bytes.empty());
  auto v = RecordView::Parse(bytes);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(v.status().message().find("version 2"), std::string::npos) << v.status().ToString();
  EXPECT_NE(v.status().message().find("upgrade"), std::string::npos) << v.status().ToString();
}

}  // namespace
}  // namespace tokenfeed::record
