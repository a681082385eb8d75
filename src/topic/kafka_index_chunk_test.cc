// One chunk of a Kafka topic's token index (kafka_index_chunk.h): what
// EncodeIndexChunk writes, ParseIndexChunk accepts and IndexChunkWalker
// walks back, and every damage ParseIndexChunk refuses, with its reason.
#include "topic/kafka_index_chunk.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tokenfeed::topic {
namespace {

constexpr uint64_t kTop = ~uint64_t{0};

std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::vector<IndexChunkEntry> Walk(const IndexChunkView& chunk) {
  std::vector<IndexChunkEntry> out;
  IndexChunkWalker walker(chunk);
  IndexChunkEntry e;
  while (walker.Next(&e)) out.push_back(e);
  return out;
}

bool Same(const std::vector<IndexChunkEntry>& a, const std::vector<IndexChunkEntry>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].offset != b[i].offset || a[i].tokens != b[i].tokens) return false;
  }
  return true;
}

std::string Encode(uint32_t partition, uint64_t first, uint64_t end, const std::vector<IndexChunkEntry>& entries) {
  auto bytes = EncodeIndexChunk(partition, first, end, entries);
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  return bytes.ok() ? *bytes : std::string();
}

void PutU32(std::string* s, size_t at, uint32_t v) {
  for (size_t i = 0; i < 4; ++i) (*s)[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
void PutU64(std::string* s, size_t at, uint64_t v) {
  for (size_t i = 0; i < 8; ++i) (*s)[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// A chunk header with these fields and no entries; the caller appends them.
std::string Header(uint32_t records, uint64_t first, uint64_t end, uint64_t tokens) {
  std::string s = "TFKX";
  s.push_back('\x01');
  s.append(3, '\0');
  s.append(32, '\0');
  PutU32(&s, 8, 7);
  PutU32(&s, 12, records);
  PutU64(&s, 16, first);
  PutU64(&s, 24, end);
  PutU64(&s, 32, tokens);
  return s;
}

// Refused with `code` and a message holding `reason`.
void ExpectRefused(const std::string& bytes, StatusCode code, const std::string& reason) {
  auto parsed = ParseIndexChunk(Bytes(bytes));
  ASSERT_FALSE(parsed.ok()) << "accepted; expected: " << reason;
  EXPECT_EQ(parsed.status().code(), code) << parsed.status().ToString();
  EXPECT_NE(parsed.status().message().find(reason), std::string::npos) << parsed.status().ToString();
}

// --- Round trips ---

TEST(KafkaIndexChunkTest, RoundTripGivesTheSameEntriesAndHeader) {
  // Gaps before the first entry, between entries and after the last one.
  const std::vector<IndexChunkEntry> entries = {{102, 5}, {103, 0}, {110, 300}, {500, 1}, {998, 70000}};
  const std::string bytes = Encode(9, 100, 1000, entries);
  ASSERT_EQ(bytes.substr(0, 4), "TFKX");
  auto parsed = ParseIndexChunk(Bytes(bytes));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->partition, 9u);
  EXPECT_EQ(parsed->records, 5u);
  EXPECT_EQ(parsed->first, 100u);
  EXPECT_EQ(parsed->end, 1000u);
  EXPECT_EQ(parsed->tokens, 5u + 300u + 1u + 70000u);
  EXPECT_EQ(parsed->body.size(), bytes.size() - kIndexChunkHeaderSize);
  EXPECT_TRUE(Same(Walk(*parsed), entries));
}

TEST(KafkaIndexChunkTest, EveryOffsetListedEncodesOneByteSkips) {
  std::vector<IndexChunkEntry> entries;
  for (uint64_t o = 0; o < 50; ++o) entries.push_back({o, o});
  const std::string bytes = Encode(0, 0, 50, entries);
  // 50 entries of skip 0 and a token count under 128: two bytes each.
  EXPECT_EQ(bytes.size(), kIndexChunkHeaderSize + 100);
  auto parsed = ParseIndexChunk(Bytes(bytes));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_TRUE(Same(Walk(*parsed), entries));
}

TEST(KafkaIndexChunkTest, ZeroRecordChunkHasOnlyAHeaderAndWalksNothing) {
  const std::string bytes = Encode(3, 40, 41, {});
  EXPECT_EQ(bytes.size(), kIndexChunkHeaderSize);
  auto parsed = ParseIndexChunk(Bytes(bytes));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->records, 0u);
  EXPECT_EQ(parsed->tokens, 0u);
  EXPECT_TRUE(Walk(*parsed).empty());
}

TEST(KafkaIndexChunkTest, OffsetsNearTwoToTheSixtyThreeAndTheTopRoundTrip) {
  const uint64_t first = (uint64_t{1} << 63) - 5;
  const std::vector<IndexChunkEntry> entries = {{first, 1}, {(uint64_t{1} << 63) + 1000, 2}, {kTop - 1, 3}};
  const std::string bytes = Encode(0xffffffffu, first, kTop, entries);
  auto parsed = ParseIndexChunk(Bytes(bytes));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->partition, 0xffffffffu);
  EXPECT_EQ(parsed->first, first);
  EXPECT_EQ(parsed->end, kTop);
  EXPECT_TRUE(Same(Walk(*parsed), entries));
  // From offset 0, a skip of 2^64 - 2 needs a 10-byte varint.
  const std::vector<IndexChunkEntry> far = {{kTop - 1, 0}};
  const std::string far_bytes = Encode(0, 0, kTop, far);
  EXPECT_EQ(far_bytes.size(), kIndexChunkHeaderSize + 10 + 1);
  auto far_parsed = ParseIndexChunk(Bytes(far_bytes));
  ASSERT_TRUE(far_parsed.ok()) << far_parsed.status().ToString();
  EXPECT_TRUE(Same(Walk(*far_parsed), far));
}

TEST(KafkaIndexChunkTest, TokenCountsNeedingTenByteVarintsRoundTrip) {
  // 2^64 - 1 ids in one record (10 bytes) and a total of exactly 2^64 - 1.
  const std::vector<IndexChunkEntry> entries = {{10, kTop - 3}, {11, 3}, {12, 0}};
  const std::string bytes = Encode(1, 10, 20, entries);
  EXPECT_EQ(bytes.size(), kIndexChunkHeaderSize + (1 + 10) + (1 + 1) + (1 + 1));
  auto parsed = ParseIndexChunk(Bytes(bytes));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->tokens, kTop);
  EXPECT_TRUE(Same(Walk(*parsed), entries));
  const std::vector<IndexChunkEntry> one = {{10, kTop}};
  const std::string one_bytes = Encode(1, 10, 11, one);  // the view below points into it
  auto one_parsed = ParseIndexChunk(Bytes(one_bytes));
  ASSERT_TRUE(one_parsed.ok()) << one_parsed.status().ToString();
  EXPECT_TRUE(Same(Walk(*one_parsed), one));
}

TEST(KafkaIndexChunkTest, MaxRecordsRoundTrip) {
  std::vector<IndexChunkEntry> entries;
  for (uint64_t i = 0; i < kMaxIndexChunkRecords; ++i) entries.push_back({1000 + 2 * i, i % 300});
  const std::string bytes = Encode(2, 1000, 1000 + 2 * uint64_t{kMaxIndexChunkRecords}, entries);
  auto parsed = ParseIndexChunk(Bytes(bytes));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->records, kMaxIndexChunkRecords);
  EXPECT_TRUE(Same(Walk(*parsed), entries));
}

// --- Encode refusals ---

TEST(KafkaIndexChunkTest, EncodeRefusesEmptyOrReversedRange) {
  for (const auto& [first, end] : std::vector<std::pair<uint64_t, uint64_t>>{{5, 5}, {6, 5}, {kTop, kTop}}) {
    auto bytes = EncodeIndexChunk(0, first, end, {});
    ASSERT_FALSE(bytes.ok()) << first << " " << end;
    EXPECT_EQ(bytes.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(bytes.status().message().find("first < end"), std::string::npos) << bytes.status().ToString();
  }
}

TEST(KafkaIndexChunkTest, EncodeRefusesEntriesOutsideTheRange) {
  const std::vector<std::vector<IndexChunkEntry>> cases = {
      {{9, 1}},             // before first
      {{20, 1}},            // at end
      {{12, 1}, {25, 1}}};  // past end
  for (const auto& entries : cases) {
    auto bytes = EncodeIndexChunk(0, 10, 20, entries);
    ASSERT_FALSE(bytes.ok());
    EXPECT_EQ(bytes.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(bytes.status().message().find("is not within"), std::string::npos) << bytes.status().ToString();
  }
}

TEST(KafkaIndexChunkTest, EncodeRefusesDecreasingOrRepeatedEntries) {
  for (const auto& entries : std::vector<std::vector<IndexChunkEntry>>{{{15, 1}, {12, 1}}, {{15, 1}, {15, 2}}}) {
    auto bytes = EncodeIndexChunk(0, 10, 20, entries);
    ASSERT_FALSE(bytes.ok());
    EXPECT_EQ(bytes.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(bytes.status().message().find("entry at offset " + std::to_string(entries[1].offset)),
              std::string::npos)
        << bytes.status().ToString();
  }
}

TEST(KafkaIndexChunkTest, EncodeRefusesMoreRecordsThanTheMaxOrTheRange) {
  std::vector<IndexChunkEntry> entries;
  for (uint64_t i = 0; i <= kMaxIndexChunkRecords; ++i) entries.push_back({i, 1});
  auto bytes = EncodeIndexChunk(0, 0, 1u << 20, entries);
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bytes.status().message().find("with 65537 records"), std::string::npos) << bytes.status().ToString();
  // More entries than offsets in the range.
  const std::vector<IndexChunkEntry> three = {{0, 1}, {1, 1}, {2, 1}};
  auto small = EncodeIndexChunk(0, 0, 2, three);
  ASSERT_FALSE(small.ok());
  EXPECT_NE(small.status().message().find("with 3 records"), std::string::npos) << small.status().ToString();
}

TEST(KafkaIndexChunkTest, EncodeRefusesATokenTotalPastTwoToTheSixtyFour) {
  const std::vector<IndexChunkEntry> entries = {{0, kTop}, {1, 1}};
  auto bytes = EncodeIndexChunk(0, 0, 2, entries);
  ASSERT_FALSE(bytes.ok());
  EXPECT_NE(bytes.status().message().find("exceed 2^64"), std::string::npos) << bytes.status().ToString();
}

// --- Parse refusals: the header ---

TEST(KafkaIndexChunkTest, ParseRefusesBytesShorterThanTheHeader) {
  const std::string good = Encode(0, 0, 10, {});
  ExpectRefused("", StatusCode::kCorruption, "of 0 bytes is shorter than its 40-byte header");
  ExpectRefused(good.substr(0, 39), StatusCode::kCorruption, "of 39 bytes is shorter than its 40-byte header");
}

TEST(KafkaIndexChunkTest, ParseRefusesABadMagic) {
  std::string bytes = Encode(0, 0, 10, {});
  bytes[3] = 'Y';
  ExpectRefused(bytes, StatusCode::kCorruption, "bytes 0-3 are not \"TFKX\"");
}

TEST(KafkaIndexChunkTest, ParseRefusesVersionZeroAsCorruption) {
  std::string bytes = Encode(0, 0, 10, {});
  bytes[4] = 0;
  ExpectRefused(bytes, StatusCode::kCorruption, "version 0 (byte 4)");
}

TEST(KafkaIndexChunkTest, ParseRefusesANewerVersionAsUnsupported) {
  std::string bytes = Encode(0, 0, 10, {});
  bytes[4] = 2;
  ExpectRefused(bytes, StatusCode::kUnsupported, "version 2 is newer than this build reads (1)");
  bytes[4] = static_cast<char>(255);
  ExpectRefused(bytes, StatusCode::kUnsupported, "version 255 is newer");
}

TEST(KafkaIndexChunkTest, ParseRefusesNonZeroReservedBytes) {
  for (const size_t at : {size_t{5}, size_t{6}, size_t{7}}) {
    std::string bytes = Encode(0, 0, 10, {});
    bytes[at] = 1;
    ExpectRefused(bytes, StatusCode::kCorruption, "reserved bytes 5-7 are not zero");
  }
}

TEST(KafkaIndexChunkTest, ParseRefusesEmptyOrReversedOffsets) {
  ExpectRefused(Header(0, 10, 10, 0), StatusCode::kCorruption, "offsets [10, 10) (bytes 16-31) are empty or reversed");
  ExpectRefused(Header(0, 11, 10, 0), StatusCode::kCorruption, "offsets [11, 10) (bytes 16-31) are empty or reversed");
}

TEST(KafkaIndexChunkTest, ParseRefusesMoreRecordsThanOffsets) {
  // Three records in two offsets, with a body that would hold them.
  ExpectRefused(Header(3, 10, 12, 0) + std::string(6, '\0'), StatusCode::kCorruption,
                "3 records (bytes 12-15) cannot lie in offsets [10, 12)");
}

TEST(KafkaIndexChunkTest, ParseRefusesMoreRecordsThanTheMax) {
  const uint32_t records = kMaxIndexChunkRecords + 1;
  ExpectRefused(Header(records, 0, uint64_t{1} << 40, 0) + std::string(2 * size_t{records}, '\0'),
                StatusCode::kCorruption, "65537 records (bytes 12-15) cannot lie in");
  ExpectRefused(Header(0xffffffffu, 0, kTop, 0), StatusCode::kCorruption, "4294967295 records (bytes 12-15)");
}

// --- Parse refusals: the entries ---

TEST(KafkaIndexChunkTest, ParseRefusesABodyTooShortForTheCount) {
  // Three records need at least six bytes.
  ExpectRefused(Header(3, 0, 10, 0) + std::string(5, '\0'), StatusCode::kCorruption,
                "5 bytes of entries cannot hold 3 records (2 to 20 bytes each)");
  // Bytes after a zero-record header are too many.
  ExpectRefused(Header(0, 0, 10, 0) + std::string(1, '\0'), StatusCode::kCorruption,
                "1 bytes of entries cannot hold 0 records");
}

TEST(KafkaIndexChunkTest, ParseRefusesABodyTooLongForTheCount) {
  ExpectRefused(Header(2, 0, 10, 0) + std::string(41, '\0'), StatusCode::kCorruption,
                "41 bytes of entries cannot hold 2 records");
}

TEST(KafkaIndexChunkTest, ParseRefusesATruncatedVarint) {
  // Record 1's token varint has its continuation bit set on the last byte.
  const std::string bytes = Header(2, 0, 10, 5) + std::string("\x00\x05\x00\x85", 4);
  ExpectRefused(bytes, StatusCode::kCorruption, "record 1's entry at byte 42 is cut short");
}

TEST(KafkaIndexChunkTest, ParseRefusesAnElevenByteVarint) {
  // A skip of 0 written in 11 bytes (ten continuation bytes).
  std::string body(10, '\x80');
  body += std::string("\x00\x00", 2);
  ExpectRefused(Header(1, 0, 10, 0) + body, StatusCode::kCorruption,
                "record 0's entry at byte 40 is cut short or is not a shortest-form varint of at most 64 bits");
}

TEST(KafkaIndexChunkTest, ParseRefusesAVarintAboveTwoToTheSixtyFour) {
  // Ten bytes whose last carries bit 64: 2^64 exactly.
  std::string tokens(9, '\x80');
  tokens += '\x02';
  ExpectRefused(Header(1, 0, 10, 0) + std::string(1, '\0') + tokens, StatusCode::kCorruption,
                "record 0's entry at byte 40 is cut short or is not a shortest-form varint of at most 64 bits");
  // The largest ten-byte value, 2^64 - 1, is accepted.
  std::string top(9, '\xff');
  top += '\x01';
  const std::string top_bytes = Header(1, 0, 10, kTop) + std::string(1, '\0') + top;
  auto parsed = ParseIndexChunk(Bytes(top_bytes));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(Walk(*parsed).size(), 1u);
  EXPECT_EQ(Walk(*parsed)[0].tokens, kTop);
}

TEST(KafkaIndexChunkTest, ParseRefusesAnEntryPastTheEndOffset) {
  // Offsets 10 and 10 + 1 + 9 = 20 in [10, 20).
  ExpectRefused(Header(2, 10, 20, 2) + std::string("\x00\x01\x09\x01", 4), StatusCode::kCorruption,
                "record 1 (entry at byte 42) lies at offset 20, past the chunk's end offset 20");
  // The last offset of the range is still within it.
  const std::string last = Header(2, 10, 20, 2) + std::string("\x00\x01\x08\x01", 4);
  auto parsed = ParseIndexChunk(Bytes(last));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(Walk(*parsed).back().offset, 19u);
}

TEST(KafkaIndexChunkTest, ParseRefusesAnOffsetThatWrapsPastTwoToTheSixtyFour) {
  // first = 2^64 - 10 and a skip of 2^64 - 1: first + skip wraps to 2^64 - 11.
  std::string skip(9, '\xff');
  skip += '\x01';
  ExpectRefused(Header(1, kTop - 9, kTop, 0) + skip + std::string(1, '\0'), StatusCode::kCorruption,
                "record 0 (entry at byte 40) skips past offset 2^64");
}

TEST(KafkaIndexChunkTest, ParseRefusesTrailingBytes) {
  // One record of 2 bytes and a third byte that the count allows (at most 20).
  ExpectRefused(Header(1, 0, 10, 4) + std::string("\x00\x04\x00", 3), StatusCode::kCorruption,
                "1 bytes follow its last record's entry, from byte 42");
}

TEST(KafkaIndexChunkTest, ParseRefusesATokenTotalOtherThanTheHeaders) {
  std::string bytes = Encode(0, 0, 10, std::vector<IndexChunkEntry>{{1, 7}, {4, 8}});
  PutU64(&bytes, 32, 16);
  ExpectRefused(bytes, StatusCode::kCorruption, "its records hold 15 token ids, but its header (bytes 32-39) says 16");
  PutU64(&bytes, 32, 0);
  ExpectRefused(bytes, StatusCode::kCorruption, "hold 15 token ids, but its header (bytes 32-39) says 0");
}

TEST(KafkaIndexChunkTest, ParseRefusesATokenSumPastTwoToTheSixtyFour) {
  std::string top(9, '\xff');
  top += '\x01';
  // 2^64 - 1 ids, then 1 more.
  ExpectRefused(Header(2, 0, 10, 0) + std::string(1, '\0') + top + std::string("\x00\x01", 2),
                StatusCode::kCorruption, "token ids pass 2^64 at record 1");
}

TEST(KafkaIndexChunkTest, ParseRefusesVarintsLongerThanTheyNeedToBe) {
  // Skip 1 written as 0x81 0x00, or 3 ids as 0x83 0x80 0x00: the same values
  // as the shortest 0x01 0x03, which is what Encode writes; a chunk has one
  // encoding, so the longer forms are refused.
  ExpectRefused(Header(1, 0, 10, 3) + std::string("\x81\x00\x03", 3), StatusCode::kCorruption,
                "record 0's entry at byte 40 is cut short or is not a shortest-form varint");
  ExpectRefused(Header(1, 0, 10, 3) + std::string("\x01\x83\x80\x00", 4), StatusCode::kCorruption,
                "record 0's entry at byte 40 is cut short or is not a shortest-form varint");
  // A lone zero byte is the shortest form of 0.
  const std::string zero = Header(1, 0, 10, 0) + std::string("\x00\x00", 2);
  auto parsed = ParseIndexChunk(Bytes(zero));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(Encode(7, 0, 10, std::vector<IndexChunkEntry>{{0, 0}}), Header(1, 0, 10, 0) + std::string("\x00\x00", 2));
}

}  // namespace
}  // namespace tokenfeed::topic
