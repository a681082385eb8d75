#include "tokenfeed/record.h"

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tokenfeed::record {
namespace {

std::span<const uint8_t> Span(const std::string& s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

std::vector<uint32_t> Ids(const IdSpan& s) {
  std::vector<uint32_t> v(s.size());
  s.CopyTo(v.data());
  return v;
}

TEST(RecordTest, RoundTripSmallIdsUse16Bits) {
  const std::vector<uint32_t> ids = {0, 5, 65535, 1234};
  RecordFields fields;
  fields.source_path = "shard-7.jsonl";
  fields.source_line = 99;
  fields.source_byte_offset = 123456789;
  fields.doc_seq = 5;
  std::string buf;
  ASSERT_TRUE(EncodeRecord(fields, ids, &buf).ok());
  auto v = RecordView::Parse(buf);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->version(), 1);
  EXPECT_EQ(v->source_path(), "shard-7.jsonl");
  EXPECT_EQ(v->source_line(), 99u);
  EXPECT_EQ(v->source_byte_offset(), 123456789u);
  EXPECT_EQ(v->doc_seq(), 5u);
  EXPECT_EQ(v->ids().width_bytes(), 2u);
  EXPECT_EQ(Ids(v->ids()), ids);
  EXPECT_EQ(v->ids()[2], 65535u);
  EXPECT_EQ(buf.size(), 36 + 13 + 3 + 4 * 2) << "header, path, padding to 4, ids";
  EXPECT_EQ((v->ids().data() - reinterpret_cast<const uint8_t*>(buf.data())) % 4, 0) << "ids start 4-aligned";
  EXPECT_EQ(v->attributes().begin(), v->attributes().end());
}

TEST(RecordTest, AMessageSourceIsMarkedAndNamedAsSuch) {
  const std::vector<uint32_t> ids = {1, 70000};
  RecordFields fields;
  fields.MessageSource("kafka://127.0.0.1:9092/raw", 3, 4711);
  std::string buf;
  ASSERT_TRUE(EncodeRecord(fields, ids, &buf).ok());
  EXPECT_EQ(static_cast<uint8_t>(buf[1]), 0x03) << "u32 ids and the message-source flag";
  auto v = RecordView::Parse(buf);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->source_kind(), SourceKind::kMessage);
  EXPECT_EQ(v->source_path(), "kafka://127.0.0.1:9092/raw");
  EXPECT_EQ(v->source_line(), 3u);         // the partition
  EXPECT_EQ(v->source_byte_offset(), 4711u);  // the offset
  EXPECT_EQ(v->doc_seq(), 4711u);

  fields.FileSource("a.jsonl", 7, 99, 12);
  ASSERT_TRUE(EncodeRecord(fields, ids, &buf).ok());
  EXPECT_EQ(static_cast<uint8_t>(buf[1]), 0x01);
  v = RecordView::Parse(buf);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->source_kind(), SourceKind::kFile);
  // Bits this build does not know are still refused.
  buf[1] = static_cast<char>(0x05);
  EXPECT_EQ(RecordView::Parse(buf).status().code(), StatusCode::kUnsupported);
}

TEST(RecordTest, LargeIdSwitchesTo32Bits) {
  const std::vector<uint32_t> ids = {1, 65536, 3};
  RecordFields fields;
  std::string buf;
  ASSERT_TRUE(EncodeRecord(fields, ids, &buf).ok());
  auto v = RecordView::Parse(buf);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->ids().width_bytes(), 4u);
  EXPECT_EQ(Ids(v->ids()), ids);
  std::vector<int64_t> wide(3);
  v->ids().CopyTo(wide.data());
  EXPECT_EQ(wide, (std::vector<int64_t>{1, 65536, 3}));
}

TEST(RecordTest, ForcedWidths) {
  const std::vector<uint32_t> ids = {1, 2};
  RecordFields fields;
  fields.id_width = IdWidth::k32;
  std::string buf;
  ASSERT_TRUE(EncodeRecord(fields, ids, &buf).ok());
  EXPECT_EQ(RecordView::Parse(buf)->ids().width_bytes(), 4u);

  const std::vector<uint32_t> big = {1, 70000};
  fields.id_width = IdWidth::k16;
  Status s = EncodeRecord(fields, big, &buf);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("70000"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("position 1"), std::string::npos) << s.ToString();
}

TEST(RecordTest, AttributesRoundTrip) {
  const Attribute attrs[] = {{"src", "wiki"}, {"lang", "de"}, {"k", ""}};
  RecordFields fields;
  fields.attributes = attrs;
  const std::vector<uint32_t> ids = {7};
  std::string buf;
  ASSERT_TRUE(EncodeRecord(fields, ids, &buf).ok());
  auto v = RecordView::Parse(buf);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  std::vector<std::pair<std::string, std::string>> got;
  for (Attribute a : v->attributes()) got.emplace_back(a.key, a.value);
  EXPECT_EQ(got, (std::vector<std::pair<std::string, std::string>>{{"src", "wiki"}, {"lang", "de"}, {"k", ""}}));
  EXPECT_EQ(v->FindAttribute("lang"), "de");
  EXPECT_EQ(v->FindAttribute("nope"), std::nullopt);
}

TEST(RecordTest, EncoderRejectsLimits) {
  std::string buf;
  const std::vector<uint32_t> ids;
  RecordFields fields;
  const std::string long_path(4097, 'p');
  fields.source_path = long_path;
  EXPECT_EQ(EncodeRecord(fields, ids, &buf).code(), StatusCode::kInvalidArgument);
  fields.source_path = std::string_view(long_path).substr(0, 4096);
  EXPECT_TRUE(EncodeRecord(fields, ids, &buf).ok()) << "4096 bytes is the limit, allowed";

  RecordFields f2;
  const std::string big(1100, 'v');
  const Attribute too_big[] = {{"k", big}};
  f2.attributes = too_big;
  Status s = EncodeRecord(f2, ids, &buf);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("1024"), std::string::npos) << s.ToString();
  const Attribute empty_key[] = {{"", "v"}};
  f2.attributes = empty_key;
  EXPECT_EQ(EncodeRecord(f2, ids, &buf).code(), StatusCode::kInvalidArgument);
  const Attribute dup[] = {{"a", "1"}, {"a", "2"}};
  f2.attributes = dup;
  EXPECT_EQ(EncodeRecord(f2, ids, &buf).code(), StatusCode::kInvalidArgument);
}

TEST(RecordTest, EncoderWritesIntoCallerMemory) {
  const std::vector<uint32_t> ids = {10, 20, 30};
  RecordFields fields;
  fields.source_path = "a";
  RecordEncoder enc;
  ASSERT_TRUE(enc.Prepare(fields, ids).ok());
  std::vector<uint8_t> mem(enc.size() + 8, 0xAB);
  enc.WriteTo(mem.data() + 4);
  EXPECT_EQ(mem[3], 0xAB);
  EXPECT_EQ(mem[4 + enc.size()], 0xAB) << "writes exactly size() bytes";
  auto v = RecordView::Parse(std::span<const uint8_t>(mem.data() + 4, enc.size()));
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(Ids(v->ids()), ids);
}

TEST(RecordTest, ReusedBufferKeepsItsCapacity) {
  std::string buf;
  std::vector<uint32_t> ids(1000, 3);
  ASSERT_TRUE(EncodeRecord({}, ids, &buf).ok());
  const char* data = buf.data();
  const size_t cap = buf.capacity();
  ids.resize(10);
  ASSERT_TRUE(EncodeRecord({}, ids, &buf).ok());
  EXPECT_EQ(buf.data(), data);
  EXPECT_EQ(buf.capacity(), cap);
}

std::string ValidRecord() {
  const Attribute attrs[] = {{"src", "web"}};
  RecordFields fields;
  fields.source_path = "in.jsonl";
  fields.attributes = attrs;
  const std::vector<uint32_t> ids = {1, 2, 3, 4, 5};
  std::string buf;
  EXPECT_TRUE(EncodeRecord(fields, ids, &buf).ok());
  return buf;
}

TEST(RecordViewTest, EveryTruncationIsCorruption) {
  const std::string good = ValidRecord();
  for (size_t n = 0; n < good.size(); ++n) {
    auto v = RecordView::Parse(Span(good.substr(0, n)));
    ASSERT_FALSE(v.ok()) << "prefix of " << n << " bytes parsed";
    EXPECT_EQ(v.status().code(), StatusCode::kCorruption) << n << ": " << v.status().ToString();
  }
  EXPECT_TRUE(RecordView::Validate(Span(good)).ok());
}

TEST(RecordViewTest, TrailingBytesAreCorruption) {
  Status s = RecordView::Validate(Span(ValidRecord() + std::string(2, '\0')));
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_NE(s.message().find("inconsistent"), std::string::npos) << s.ToString();
}

TEST(RecordViewTest, UnknownVersionFlagsAndReservedAreRejected) {
  std::string r = ValidRecord();
  r[0] = 2;
  Status s = RecordView::Validate(Span(r));
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("version 2"), std::string::npos) << s.ToString();
  r[0] = 0;
  EXPECT_EQ(RecordView::Validate(Span(r)).code(), StatusCode::kCorruption);

  r = ValidRecord();
  r[1] = 0x04;
  s = RecordView::Validate(Span(r));
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("0x04"), std::string::npos) << s.ToString();

  r = ValidRecord();
  r[34] = 1;
  EXPECT_EQ(RecordView::Validate(Span(r)).code(), StatusCode::kCorruption);
}

TEST(RecordViewTest, RawTextIsNotATokenRecordNotANewerVersion) {
  for (std::string text : {std::string("{\"text\": \"a raw document\"}"), std::string("plain words, no JSON"),
                           std::string("{") }) {
    Status s = RecordView::Validate(Span(text));
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
    EXPECT_NE(s.message().find("not a token record"), std::string::npos) << s.ToString();
    EXPECT_EQ(s.message().find("upgrade"), std::string::npos) << s.ToString();
  }
  std::string r = ValidRecord();
  r[0] = '{';  // a real header keeps its zero bytes: still a newer version, not text
  EXPECT_EQ(RecordView::Validate(Span(r)).code(), StatusCode::kUnsupported);
}

TEST(RecordViewTest, RawTextStartingWithNonAsciiUtf8IsNotATokenRecord) {
  const std::string texts[] = {
      "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\xE3\x81\xAE\xE6\x96\x87\xE6\x9B\xB8",  // CJK
      "\xC3\x89t\xC3\xA9 \xC3\xA0 Paris",                                                      // "Été à Paris"
      "\xEF\xBB\xBF{\"text\": \"after a byte-order mark\"}",                                    // UTF-8 BOM
      "\xF0\x9F\x98\x80 an emoji first",                                                          // 4-byte sequence
      "\xC3\x89",                                                                                    // "É" alone
  };
  for (const std::string& text : texts) {
    Status s = RecordView::Validate(Span(text));
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
    EXPECT_NE(s.message().find("not a token record"), std::string::npos) << s.ToString();
    EXPECT_EQ(s.message().find("upgrade"), std::string::npos) << s.ToString();
  }
  Status s = RecordView::Validate(Span(texts[1]));
  EXPECT_NE(s.message().find("'\xC3\x89'"), std::string::npos) << s.ToString();
  s = RecordView::Validate(Span(texts[2]));
  EXPECT_NE(s.message().find("byte-order mark"), std::string::npos) << s.ToString();
}

TEST(RecordViewTest, NewerVersionByteAboveAsciiIsStillANewerVersion) {
  // Version bytes that are UTF-8 lead bytes, in a real header (flags and
  // reserved bytes are control bytes): still a newer format, not text.
  for (uint8_t version : {uint8_t{0xC3}, uint8_t{0xE6}, uint8_t{0xEF}, uint8_t{0xF0}, uint8_t{0xFF}}) {
    std::string r = ValidRecord();
    r[0] = static_cast<char>(version);
    Status s = RecordView::Validate(Span(r));
    EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.ToString();
    EXPECT_NE(s.message().find("version " + std::to_string(version)), std::string::npos) << s.ToString();
  }
  // A lead byte whose sequence is invalid (an overlong form, a bare lead, a
  // continuation byte first, a surrogate) is not text either.
  for (std::string bytes : {std::string("\xC0\x80 words"), std::string("\xE6 words"), std::string("\x80 words"),
                            std::string("\xED\xA0\x80 words"), std::string("\xE6\x97")}) {
    Status s = RecordView::Validate(Span(bytes));
    EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.ToString();
  }
}

TEST(RecordViewTest, DamagedAttributeBlockIsCorruption) {
  std::string r = ValidRecord();
  const size_t attr_start = 36 + 8;
  r[attr_start] = 60;  // key length past the block
  Status s = RecordView::Validate(Span(r));
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_NE(s.message().find("attribute 0"), std::string::npos) << s.ToString();
  r = ValidRecord();
  r[attr_start] = 0;
  EXPECT_EQ(RecordView::Validate(Span(r)).code(), StatusCode::kCorruption);
}

TEST(RecordViewTest, RandomBytesNeverCrash) {
  // Bounded: 20000 random inputs of up to 200 bytes, with version byte 1 so
  // that most get past the first check.
  std::mt19937_64 rng(99);
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string s(rng() % 200, '\0');
    for (char& c : s) c = static_cast<char>(rng());
    if (!s.empty()) s[0] = 1;
    if (s.size() > 35) s[34] = s[35] = 0;
    auto v = RecordView::Parse(Span(s));
    if (v.ok()) {
      ++accepted;
      // A valid record ends exactly with its ids.
      ASSERT_EQ(v->ids().data() + v->ids().size() * v->ids().width_bytes(),
                reinterpret_cast<const uint8_t*>(s.data()) + s.size());
      std::vector<uint32_t> out(v->ids().size());
      v->ids().CopyTo(out.data());
      for (Attribute a : v->attributes()) (void)a;
    }
  }
  SUCCEED() << accepted << " random inputs happened to be valid";
}

}  // namespace
}  // namespace tokenfeed::record
