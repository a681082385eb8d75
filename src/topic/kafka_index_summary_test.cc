// The summary record of a Kafka topic's token index
// (kafka_index_summary.h): what EncodeIndexSummary writes, ParseIndexSummary
// accepts and IndexSummaryWalker walks back (checked against a brute-force
// grouping of the entries), and every damage ParseIndexSummary refuses,
// with its reason.
#include "topic/kafka_index_summary.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace tokenfeed::topic {
namespace {

constexpr uint64_t kTop = ~uint64_t{0};

std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::vector<IndexSummaryGroup> Walk(const IndexSummaryView& summary) {
  std::vector<IndexSummaryGroup> out;
  IndexSummaryWalker walker(summary);
  IndexSummaryGroup g;
  // Stop one past the count: a longer walk is a failure the caller sees.
  while (out.size() <= summary.groups && walker.Next(&g)) out.push_back(g);
  return out;
}

// The groups the header comment defines, computed without the code under
// test: slice [first, end) at the multiples of `group` (a slice that would
// end past 2^64 ends at `end`) and keep the slices that hold an
// entry.
std::vector<IndexSummaryGroup> BruteGroups(uint32_t group, uint64_t first, uint64_t end,
                                           const std::vector<IndexChunkEntry>& entries) {
  std::vector<IndexSummaryGroup> out;
  for (const IndexChunkEntry& e : entries) {
    const uint64_t slot_start = e.offset / group * group;  // at most the offset
    const bool past_top = slot_start > kTop - group;       // the slot ends at or past 2^64
    const uint64_t lo = slot_start < first ? first : slot_start;
    const uint64_t hi = past_top || slot_start + group > end ? end : slot_start + group;
    if (out.empty() || out.back().first != lo) out.push_back({lo, hi, 0, 0});
    out.back().records += 1;
    out.back().tokens += e.tokens;
  }
  return out;
}

::testing::AssertionResult SameGroups(const std::vector<IndexSummaryGroup>& got,
                                      const std::vector<IndexSummaryGroup>& want) {
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure() << got.size() << " groups walked, " << want.size() << " expected";
  }
  for (size_t i = 0; i < got.size(); ++i) {
    const IndexSummaryGroup& a = got[i];
    const IndexSummaryGroup& b = want[i];
    if (a.first != b.first || a.end != b.end || a.records != b.records || a.tokens != b.tokens) {
      return ::testing::AssertionFailure() << "group " << i << ": got [" << a.first << ", " << a.end << ") "
                                           << a.records << " records " << a.tokens << " ids; expected ["
                                           << b.first << ", " << b.end << ") " << b.records << " records "
                                           << b.tokens << " ids";
    }
  }
  return ::testing::AssertionSuccess();
}

std::string Encode(uint32_t partition, uint32_t group, uint64_t first, uint64_t end,
                   const std::vector<IndexChunkEntry>& entries) {
  auto bytes = EncodeIndexSummary(partition, group, first, end, entries);
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  return bytes.ok() ? *bytes : std::string();
}

// Encodes, parses and walks; checks the header and the groups against the
// brute-force grouping. Returns the bytes.
std::string RoundTrip(uint32_t partition, uint32_t group, uint64_t first, uint64_t end,
                      const std::vector<IndexChunkEntry>& entries) {
  const std::string bytes = Encode(partition, group, first, end, entries);
  auto parsed = ParseIndexSummary(Bytes(bytes));
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  if (!parsed.ok()) return bytes;
  const std::vector<IndexSummaryGroup> want = BruteGroups(group, first, end, entries);
  uint64_t tokens = 0;
  for (const IndexChunkEntry& e : entries) tokens += e.tokens;
  EXPECT_EQ(parsed->partition, partition);
  EXPECT_EQ(parsed->group, group);
  EXPECT_EQ(parsed->records, entries.size());
  EXPECT_EQ(parsed->groups, want.size());
  EXPECT_EQ(parsed->first, first);
  EXPECT_EQ(parsed->end, end);
  EXPECT_EQ(parsed->tokens, tokens);
  EXPECT_EQ(parsed->body.data(), Bytes(bytes).data() + kIndexSummaryHeaderSize);
  EXPECT_EQ(parsed->body.size(), bytes.size() - kIndexSummaryHeaderSize);
  const std::vector<IndexSummaryGroup> walked = Walk(*parsed);
  EXPECT_TRUE(SameGroups(walked, want)) << "group " << group << " [" << first << ", " << end << ")";
  for (const IndexSummaryGroup& g : walked) {
    EXPECT_LT(g.first, g.end);
    EXPECT_EQ(g.first / group, (g.end - 1) / group) << "group [" << g.first << ", " << g.end << ") spans two slots";
  }
  return bytes;
}

void PutU32(std::string* s, size_t at, uint32_t v) {
  for (size_t i = 0; i < 4; ++i) (*s)[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
void PutU64(std::string* s, size_t at, uint64_t v) {
  for (size_t i = 0; i < 8; ++i) (*s)[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// Shortest-form LEB128 varints, written here rather than taken from the
// code under test.
std::string Varints(std::initializer_list<uint64_t> values) {
  std::string out;
  for (uint64_t v : values) {
    while (v >= 0x80) {
      out.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out.push_back(static_cast<char>(v));
  }
  return out;
}

// A summary header of partition 7 with these fields and no entries; the
// caller appends them.
std::string Header(uint32_t group, uint32_t records, uint32_t groups, uint64_t first, uint64_t end,
                   uint64_t tokens) {
  std::string s = "TFKS";
  s.push_back('\x01');
  s.append(3, '\0');
  s.append(40, '\0');
  PutU32(&s, 8, 7);
  PutU32(&s, 12, group);
  PutU32(&s, 16, records);
  PutU32(&s, 20, groups);
  PutU64(&s, 24, first);
  PutU64(&s, 32, end);
  PutU64(&s, 40, tokens);
  return s;
}

// Refused with `code` and a message holding `reason`.
void ExpectRefused(const std::string& bytes, StatusCode code, const std::string& reason) {
  auto parsed = ParseIndexSummary(Bytes(bytes));
  ASSERT_FALSE(parsed.ok()) << "accepted; expected: " << reason;
  EXPECT_EQ(parsed.status().code(), code) << parsed.status().ToString();
  EXPECT_NE(parsed.status().message().find(reason), std::string::npos)
      << parsed.status().ToString() << "\nexpected: " << reason;
}

void ExpectAccepted(const std::string& bytes) {
  auto parsed = ParseIndexSummary(Bytes(bytes));
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
}

// --- The layout ---

TEST(KafkaIndexSummaryTest, BytesAreTheDocumentedLayout) {
  // Group 4 over [2, 20): slots [2, 4), [4, 8), [8, 12), [12, 16), [16, 20).
  const std::vector<IndexChunkEntry> entries = {{2, 5}, {3, 1}, {9, 300}, {17, 0}};
  std::string want = Header(4, 4, 3, 2, 20, 306);
  want += Varints({0, 2, 6});    // slot 0: two records, 6 ids
  want += Varints({1, 1, 300});  // slot 2 (one passed over): 300 ids
  want += Varints({1, 1, 0});    // slot 4 (one passed over): no ids
  EXPECT_EQ(Encode(7, 4, 2, 20, entries), want);
  EXPECT_EQ(RoundTrip(7, 4, 2, 20, entries), want);
}

// --- Round trips ---

TEST(KafkaIndexSummaryTest, DenseRecordsRoundTrip) {
  std::vector<IndexChunkEntry> entries;
  for (uint64_t o = 0; o < 200; ++o) entries.push_back({o, o % 7});
  const std::string bytes = RoundTrip(3, kIndexSummaryGroup, 0, 200, entries);
  // Groups [0, 64), [64, 128), [128, 192), [192, 200): 64, 64, 64, 8 records.
  auto parsed = ParseIndexSummary(Bytes(bytes));
  ASSERT_TRUE(parsed.ok());
  const std::vector<IndexSummaryGroup> walked = Walk(*parsed);
  ASSERT_EQ(walked.size(), 4u);
  EXPECT_EQ(walked[0].records, 64u);
  EXPECT_EQ(walked[3].first, 192u);
  EXPECT_EQ(walked[3].end, 200u);
  EXPECT_EQ(walked[3].records, 8u);
}

TEST(KafkaIndexSummaryTest, GapsAndEmptyGroupsRoundTrip) {
  // Nothing in [0, 64) nor in [192, 1024), whole empty groups between.
  const std::vector<IndexChunkEntry> entries = {{64, 5},   {65, 0},     {127, 300}, {128, 1},
                                                {1024, 9}, {5000, 70000}, {9999, 2}};
  RoundTrip(1, 64, 0, 10000, entries);
  // The same entries with other groups.
  for (const uint32_t group : {1u, 2u, 3u, 7u, 100u, 1000u, 4096u}) RoundTrip(1, group, 0, 10000, entries);
}

TEST(KafkaIndexSummaryTest, FirstAndEndOffTheGroupRoundTrip) {
  // [100, 1000) with group 64: the first group is [100, 128), the last
  // [960, 1000).
  const std::vector<IndexChunkEntry> entries = {{100, 1}, {127, 2}, {128, 3}, {500, 4}, {960, 5}, {999, 6}};
  const std::string bytes = RoundTrip(0, 64, 100, 1000, entries);
  auto parsed = ParseIndexSummary(Bytes(bytes));
  ASSERT_TRUE(parsed.ok());
  const std::vector<IndexSummaryGroup> walked = Walk(*parsed);
  ASSERT_EQ(walked.size(), 4u);
  EXPECT_EQ(walked[0].first, 100u);
  EXPECT_EQ(walked[0].end, 128u);
  EXPECT_EQ(walked[0].records, 2u);
  EXPECT_EQ(walked[3].first, 960u);
  EXPECT_EQ(walked[3].end, 1000u);
  // A group's offsets split between two summaries: [128, 150) and [150, 192).
  RoundTrip(0, 64, 100, 150, {{130, 1}, {149, 1}});
  RoundTrip(0, 64, 150, 300, {{150, 1}, {191, 1}, {192, 1}});
  // One offset only, inside a group.
  RoundTrip(0, 64, 70, 71, {{70, 9}});
  RoundTrip(0, 64, 70, 71, {});
  // The first group's every offset holds a record.
  std::vector<IndexChunkEntry> full;
  for (uint64_t o = 100; o < 128; ++o) full.push_back({o, 1});
  RoundTrip(0, 64, 100, 130, full);
}

TEST(KafkaIndexSummaryTest, GroupOfOneListsEveryRecord) {
  const std::vector<IndexChunkEntry> entries = {{10, 1}, {11, 2}, {15, 0}, {40, kTop - 3}};
  const std::string bytes = RoundTrip(2, 1, 10, 41, entries);
  auto parsed = ParseIndexSummary(Bytes(bytes));
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->groups, parsed->records);
  const std::vector<IndexSummaryGroup> walked = Walk(*parsed);
  ASSERT_EQ(walked.size(), entries.size());
  for (size_t i = 0; i < walked.size(); ++i) {
    EXPECT_EQ(walked[i].first, entries[i].offset);
    EXPECT_EQ(walked[i].end, entries[i].offset + 1);
    EXPECT_EQ(walked[i].records, 1u);
    EXPECT_EQ(walked[i].tokens, entries[i].tokens);
  }
}

TEST(KafkaIndexSummaryTest, LargestGroupRoundTrips) {
  const uint64_t g = kMaxIndexSummaryGroup;
  const std::vector<IndexChunkEntry> entries = {{5, 1}, {g - 1, 2}, {g, 3}, {3 * g + 17, 4}, {5 * g + 6, 5}};
  RoundTrip(4, kMaxIndexSummaryGroup, 5, 5 * g + 7, entries);
  // One group holding records at its first and last offsets.
  RoundTrip(4, kMaxIndexSummaryGroup, 0, g, {{0, 1}, {g - 1, 1}});
}

TEST(KafkaIndexSummaryTest, NoRecordsOverAHugeRangeIsOnlyAHeader) {
  for (const uint32_t group : {1u, kIndexSummaryGroup, kMaxIndexSummaryGroup}) {
    const std::string bytes = RoundTrip(5, group, 0, uint64_t{1} << 40, {});
    EXPECT_EQ(bytes.size(), kIndexSummaryHeaderSize);
    EXPECT_EQ(bytes.size(), 48u);
    auto parsed = ParseIndexSummary(Bytes(bytes));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(parsed->records, 0u);
    EXPECT_EQ(parsed->groups, 0u);
    EXPECT_EQ(parsed->tokens, 0u);
    EXPECT_TRUE(Walk(*parsed).empty());
  }
  EXPECT_EQ(RoundTrip(5, 64, 0, kTop, {}).size(), kIndexSummaryHeaderSize);
}

TEST(KafkaIndexSummaryTest, OneRecordAtTheEndOfAHugeRange) {
  // The skip from slot 0 to the last needs a long varint.
  const uint64_t end = uint64_t{1} << 40;
  RoundTrip(0, 1, 0, end, {{end - 1, 7}});
  RoundTrip(0, 64, 0, end, {{0, 1}, {end - 1, 7}});
  // From offset 0 to 2^64 - 2 with group 1: a skip of 2^64 - 3 after slot 0.
  const std::string bytes = RoundTrip(0, 1, 0, kTop, {{0, 1}, {kTop - 1, 2}});
  EXPECT_EQ(bytes.size(), kIndexSummaryHeaderSize + 3 + (10 + 1 + 1));
}

TEST(KafkaIndexSummaryTest, OffsetsNearTwoToTheSixtyFourRoundTrip) {
  // The last slot's end, (first / group + k + 1) * group, passes 2^64 for
  // each of these groups; the group ends at `end`.
  for (const uint32_t group : {1u, 3u, 64u, 1000u, 65536u, 1000003u, kMaxIndexSummaryGroup}) {
    const uint64_t first = kTop - 3 * uint64_t{group} - 5;
    const std::vector<IndexChunkEntry> entries = {{first, 1}, {first + group, 2}, {kTop - 2, 3}, {kTop - 1, 4}};
    RoundTrip(0xffffffffu, group, first, kTop, entries);
    // Only the last offset, in a summary of one offset.
    RoundTrip(0xffffffffu, group, kTop - 1, kTop, {{kTop - 1, kTop}});
  }
  // The whole range of offsets, records at both ends.
  RoundTrip(0, kMaxIndexSummaryGroup, 0, kTop, {{0, 1}, {kTop - 1, 1}});
  RoundTrip(0, 3, 0, kTop, {{0, 1}, {1, 1}, {kTop - 2, 1}, {kTop - 1, 1}});
}

TEST(KafkaIndexSummaryTest, TokenCountsNeedingTenByteVarintsRoundTrip) {
  // A group of 2^64 - 1 ids in all, and a total of exactly 2^64 - 1.
  const std::vector<IndexChunkEntry> entries = {{10, kTop - 3}, {11, 3}, {70, 0}};
  const std::string bytes = RoundTrip(1, 64, 10, 100, entries);
  EXPECT_EQ(bytes.size(), kIndexSummaryHeaderSize + (1 + 1 + 10) + (1 + 1 + 1));
}

TEST(KafkaIndexSummaryTest, MaxRecordsRoundTrip) {
  std::vector<IndexChunkEntry> entries;
  for (uint64_t i = 0; i < kMaxIndexChunkRecords; ++i) entries.push_back({1000 + i + i / 3, i % 300});
  const uint64_t end = entries.back().offset + 1;
  RoundTrip(2, 64, 1000, end, entries);
  RoundTrip(2, 1, 1000, end, entries);
  RoundTrip(2, kMaxIndexSummaryGroup, 1000, end, entries);
}

TEST(KafkaIndexSummaryTest, RandomSummariesMatchTheBruteForceGrouping) {
  std::mt19937_64 rng(20261206);
  const std::vector<uint32_t> groups = {1, 2, 3, 5, 64, 100, 4096, kMaxIndexSummaryGroup};
  for (int round = 0; round < 2000; ++round) {
    const uint32_t group = groups[rng() % groups.size()];
    const uint64_t span = 1 + rng() % (round % 3 == 0 ? 100 : 100000);
    uint64_t first = 0;
    switch (rng() % 3) {
      case 0: first = rng() % 1000000; break;
      case 1: first = kTop - span - rng() % 1000; break;
      default: first = (rng() % 1000) * group; break;
    }
    const uint64_t end = first + span;
    std::vector<IndexChunkEntry> entries;
    const uint64_t density = 1 + rng() % 8;
    for (uint64_t o = first; o < end && entries.size() < 3000; ++o) {
      if (rng() % density == 0) entries.push_back({o, rng() % 3 == 0 ? rng() >> 20 : rng() % 200});
    }
    if (HasFailure()) break;
    RoundTrip(static_cast<uint32_t>(rng()), group, first, end, entries);
  }
}

// --- Encode refusals ---

void ExpectEncodeRefused(uint32_t group, uint64_t first, uint64_t end, const std::vector<IndexChunkEntry>& entries,
                         const std::string& reason) {
  auto bytes = EncodeIndexSummary(0, group, first, end, entries);
  ASSERT_FALSE(bytes.ok()) << "encoded; expected: " << reason;
  EXPECT_EQ(bytes.status().code(), StatusCode::kInvalidArgument) << bytes.status().ToString();
  EXPECT_NE(bytes.status().message().find(reason), std::string::npos)
      << bytes.status().ToString() << "\nexpected: " << reason;
}

TEST(KafkaIndexSummaryTest, EncodeRefusesAGroupOfZeroOrPastTheMax) {
  ExpectEncodeRefused(0, 0, 10, {}, "group must be 1 to 1048576 offsets; got 0");
  ExpectEncodeRefused(kMaxIndexSummaryGroup + 1, 0, 10, {}, "group must be 1 to 1048576 offsets; got 1048577");
  ExpectEncodeRefused(0xffffffffu, 0, 10, {}, "got 4294967295");
}

TEST(KafkaIndexSummaryTest, EncodeRefusesEmptyOrReversedRange) {
  for (const auto& [first, end] : std::vector<std::pair<uint64_t, uint64_t>>{{5, 5}, {6, 5}, {kTop, kTop}}) {
    ExpectEncodeRefused(64, first, end, {}, "first < end");
  }
}

TEST(KafkaIndexSummaryTest, EncodeRefusesMoreRecordsThanTheMaxOrTheRange) {
  std::vector<IndexChunkEntry> entries;
  for (uint64_t i = 0; i <= kMaxIndexChunkRecords; ++i) entries.push_back({i, 1});
  ExpectEncodeRefused(64, 0, 1u << 20, entries, "with 65537 records");
  ExpectEncodeRefused(64, 0, 2, {{0, 1}, {1, 1}, {2, 1}}, "with 3 records");
}

TEST(KafkaIndexSummaryTest, EncodeRefusesEntriesOutsideTheRangeOrOutOfOrder) {
  ExpectEncodeRefused(64, 10, 20, {{9, 1}}, "entry at offset 9 is not within [10, 20)");
  ExpectEncodeRefused(64, 10, 20, {{20, 1}}, "entry at offset 20 is not within");
  ExpectEncodeRefused(64, 10, 100, {{12, 1}, {100, 1}}, "entry at offset 100 is not within");
  // Decreasing or repeated, within one group and across groups.
  ExpectEncodeRefused(64, 10, 100, {{15, 1}, {12, 1}}, "entry at offset 12 is not within [16, 100)");
  ExpectEncodeRefused(64, 10, 100, {{15, 1}, {15, 2}}, "entry at offset 15 is not within [16, 100)");
  ExpectEncodeRefused(64, 10, 200, {{70, 1}, {20, 2}}, "entry at offset 20 is not within [71, 200)");
  ExpectEncodeRefused(1, 10, 100, {{15, 1}, {15, 2}}, "entry at offset 15 is not within");
}

TEST(KafkaIndexSummaryTest, EncodeRefusesATokenTotalPastTwoToTheSixtyFour) {
  // Within one group, and across two.
  ExpectEncodeRefused(64, 0, 200, {{0, kTop}, {1, 1}}, "exceed 2^64");
  ExpectEncodeRefused(64, 0, 200, {{0, kTop}, {100, 1}}, "exceed 2^64");
}

// --- Parse refusals: the header ---

TEST(KafkaIndexSummaryTest, ParseRefusesBytesShorterThanTheHeader) {
  const std::string good = Encode(0, 64, 0, 10, {});
  ExpectRefused("", StatusCode::kCorruption, "of 0 bytes is shorter than its 48-byte header");
  ExpectRefused(good.substr(0, 47), StatusCode::kCorruption, "of 47 bytes is shorter than its 48-byte header");
}

TEST(KafkaIndexSummaryTest, ParseRefusesABadMagic) {
  std::string bytes = Encode(0, 64, 0, 10, {});
  bytes[3] = 'X';  // a chunk's magic
  ExpectRefused(bytes, StatusCode::kCorruption, "bytes 0-3 are not \"TFKS\"");
}

TEST(KafkaIndexSummaryTest, ParseRefusesVersionZeroAsCorruption) {
  std::string bytes = Encode(0, 64, 0, 10, {});
  bytes[4] = 0;
  ExpectRefused(bytes, StatusCode::kCorruption, "version 0 (byte 4) is not a version");
}

TEST(KafkaIndexSummaryTest, ParseRefusesANewerVersionAsUnsupported) {
  std::string bytes = Encode(0, 64, 0, 10, {});
  bytes[4] = 2;
  ExpectRefused(bytes, StatusCode::kUnsupported, "version 2 is newer than this build reads (1)");
  bytes[4] = static_cast<char>(255);
  ExpectRefused(bytes, StatusCode::kUnsupported, "version 255 is newer");
}

TEST(KafkaIndexSummaryTest, ParseRefusesNonZeroReservedBytes) {
  for (const size_t at : {size_t{5}, size_t{6}, size_t{7}}) {
    std::string bytes = Encode(0, 64, 0, 10, {});
    bytes[at] = 1;
    ExpectRefused(bytes, StatusCode::kCorruption, "reserved bytes 5-7 are not zero");
  }
}

TEST(KafkaIndexSummaryTest, ParseRefusesAGroupOfZeroOrPastTheMax) {
  ExpectRefused(Header(0, 0, 0, 0, 10, 0), StatusCode::kCorruption,
                "its group of 0 offsets (bytes 12-15) is not 1 to 1048576");
  ExpectRefused(Header(kMaxIndexSummaryGroup + 1, 0, 0, 0, 10, 0), StatusCode::kCorruption,
                "its group of 1048577 offsets (bytes 12-15) is not 1 to 1048576");
  ExpectAccepted(Header(kMaxIndexSummaryGroup, 0, 0, 0, 10, 0));
  ExpectAccepted(Header(1, 0, 0, 0, 10, 0));
}

TEST(KafkaIndexSummaryTest, ParseRefusesEmptyOrReversedOffsets) {
  ExpectRefused(Header(64, 0, 0, 10, 10, 0), StatusCode::kCorruption,
                "its offsets [10, 10) (bytes 24-39) are empty or reversed");
  ExpectRefused(Header(64, 0, 0, 11, 10, 0), StatusCode::kCorruption,
                "its offsets [11, 10) (bytes 24-39) are empty or reversed");
}

TEST(KafkaIndexSummaryTest, ParseRefusesMoreRecordsThanOffsetsOrTheMax) {
  // Three records in two offsets, with a body that would hold them.
  ExpectRefused(Header(1, 3, 2, 10, 12, 0) + Varints({0, 1, 0, 0, 1, 0}), StatusCode::kCorruption,
                "3 records (bytes 16-19) cannot lie in offsets [10, 12)");
  const uint32_t records = kMaxIndexChunkRecords + 1;
  ExpectRefused(Header(64, records, 1, 0, uint64_t{1} << 40, 0), StatusCode::kCorruption,
                "65537 records (bytes 16-19) cannot lie in");
  ExpectRefused(Header(64, 0xffffffffu, 1, 0, kTop, 0), StatusCode::kCorruption, "4294967295 records (bytes 16-19)");
}

TEST(KafkaIndexSummaryTest, ParseRefusesMoreGroupsThanRecords) {
  ExpectRefused(Header(1, 2, 3, 0, 10, 0) + Varints({0, 1, 0, 0, 1, 0, 0, 1, 0}), StatusCode::kCorruption,
                "3 groups listed (bytes 20-23) for 2 records");
  ExpectRefused(Header(1, 0, 1, 0, 10, 0) + Varints({0, 1, 0}), StatusCode::kCorruption,
                "1 groups listed (bytes 20-23) for 0 records");
}

TEST(KafkaIndexSummaryTest, ParseRefusesRecordsWithNoGroupListed) {
  ExpectRefused(Header(64, 1, 0, 0, 10, 0), StatusCode::kCorruption, "0 groups listed (bytes 20-23) for 1 records");
}

// --- Parse refusals: the group entries ---

TEST(KafkaIndexSummaryTest, ParseRefusesABodyTooShortForTheCount) {
  // Two groups need at least six bytes.
  ExpectRefused(Header(1, 2, 2, 0, 10, 0) + std::string(5, '\x01'), StatusCode::kCorruption,
                "5 bytes of entries cannot hold 2 groups (3 to 23 bytes each)");
  // Bytes after a header listing no group are too many.
  ExpectRefused(Header(64, 0, 0, 0, 10, 0) + std::string(1, '\0'), StatusCode::kCorruption,
                "1 bytes of entries cannot hold 0 groups");
}

TEST(KafkaIndexSummaryTest, ParseRefusesABodyTooLongForTheCount) {
  ExpectRefused(Header(1, 2, 2, 0, 10, 0) + std::string(47, '\0'), StatusCode::kCorruption,
                "47 bytes of entries cannot hold 2 groups (3 to 23 bytes each)");
  // Exactly 23 bytes a group is within the bound (and refused later for
  // another reason).
  auto parsed = ParseIndexSummary(Bytes(Header(1, 2, 2, 0, 10, 0) + std::string(46, '\0')));
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message().find("cannot hold"), std::string::npos) << parsed.status().ToString();
}

TEST(KafkaIndexSummaryTest, ParseRefusesACutVarint) {
  // Group entry 1's token varint has its continuation bit set on the last
  // byte (the body of 7 bytes passes the 3-to-23 bound).
  ExpectRefused(Header(1, 2, 2, 0, 10, 5) + Varints({0, 1, 5}) + std::string("\x00\x01\x85\x80", 4),
                StatusCode::kCorruption, "group entry 1 at byte 51 is cut short");
  // Cut in its skip and in its record count.
  ExpectRefused(Header(1, 2, 2, 0, 10, 5) + Varints({0, 1, 5}) + std::string("\x80\x80\x80", 3),
                StatusCode::kCorruption, "group entry 1 at byte 51 is cut short");
  ExpectRefused(Header(1, 2, 2, 0, 10, 5) + Varints({0, 1, 5}) + std::string("\x00\x81\x80", 3),
                StatusCode::kCorruption, "group entry 1 at byte 51 is cut short");
}

TEST(KafkaIndexSummaryTest, ParseRefusesVarintsLongerThanTheyNeedToBe) {
  // Skip 1 as 0x81 0x00, 1 record as 0x81 0x00, 3 ids as 0x83 0x80 0x00:
  // the same values as the shortest forms Encode writes; a summary has one
  // encoding, so the longer forms are refused.
  const std::string reason = "group entry 0 at byte 48 is cut short or is not a shortest-form varint";
  ExpectRefused(Header(1, 1, 1, 0, 10, 3) + std::string("\x81\x00\x01\x03", 4), StatusCode::kCorruption, reason);
  ExpectRefused(Header(1, 1, 1, 0, 10, 3) + std::string("\x01\x81\x00\x03", 4), StatusCode::kCorruption, reason);
  ExpectRefused(Header(1, 1, 1, 0, 10, 3) + std::string("\x01\x01\x83\x80\x00", 5), StatusCode::kCorruption, reason);
  // A zero written in two bytes.
  ExpectRefused(Header(1, 1, 1, 0, 10, 0) + std::string("\x00\x01\x80\x00", 4), StatusCode::kCorruption, reason);
  // The shortest forms are accepted, and are what Encode writes.
  const std::string shortest = Header(1, 1, 1, 0, 10, 3) + std::string("\x01\x01\x03", 3);
  ExpectAccepted(shortest);
  EXPECT_EQ(Encode(7, 1, 0, 10, {{1, 3}}), shortest);
}

TEST(KafkaIndexSummaryTest, ParseRefusesAVarintPastTwoToTheSixtyFourOrElevenBytes) {
  const std::string reason = "group entry 0 at byte 48 is cut short or is not a shortest-form varint of at most 64 bits";
  // 2^64 exactly: ten bytes whose last carries bit 64.
  std::string two64(9, '\x80');
  two64 += '\x02';
  ExpectRefused(Header(1, 1, 1, 0, 10, 0) + Varints({0, 1}) + two64, StatusCode::kCorruption, reason);
  // Eleven bytes.
  std::string eleven(10, '\x80');
  eleven += '\x01';
  ExpectRefused(Header(1, 1, 1, 0, 10, 0) + Varints({0, 1}) + eleven, StatusCode::kCorruption, reason);
  // 2^64 - 1 in ten bytes is accepted.
  ExpectAccepted(Header(1, 1, 1, 0, 10, kTop) + Varints({0, 1, kTop}));
}

TEST(KafkaIndexSummaryTest, ParseRefusesAGroupPastTheEnd) {
  // [0, 100) with group 64 has slots 0 and 1; slot 2 is past the end.
  ExpectRefused(Header(64, 1, 1, 0, 100, 0) + Varints({2, 1, 0}), StatusCode::kCorruption,
                "group entry 0 (at byte 48) lies past the summary's end offset 100");
  ExpectAccepted(Header(64, 1, 1, 0, 100, 0) + Varints({1, 1, 0}));
  // End on a slot's boundary: [0, 128) has slots 0 and 1 only.
  ExpectRefused(Header(64, 2, 2, 0, 128, 0) + Varints({0, 1, 0, 1, 1, 0}), StatusCode::kCorruption,
                "group entry 1 (at byte 51) lies past the summary's end offset 128");
  // The second entry's skip counts from the slot after the first's.
  ExpectRefused(Header(64, 2, 2, 0, 200, 0) + Varints({1, 1, 0, 2, 1, 0}), StatusCode::kCorruption,
                "group entry 1 (at byte 51) lies past the summary's end offset 200");
  ExpectAccepted(Header(64, 2, 2, 0, 200, 0) + Varints({1, 1, 0, 1, 1, 0}));
  // Skips whose slot overflows: 2^64 - 1 after slot 0, and a slot whose
  // start passes 2^64.
  ExpectRefused(Header(1, 2, 2, 0, kTop, 0) + Varints({0, 1, 0, kTop, 1, 0}), StatusCode::kCorruption,
                "group entry 1 (at byte 51) lies past the summary's end offset");
  ExpectRefused(Header(64, 1, 1, kTop - 100, kTop, 0) + Varints({kTop / 64, 1, 0}), StatusCode::kCorruption,
                "group entry 0 (at byte 48) lies past the summary's end offset");
  ExpectRefused(Header(3, 1, 1, kTop - 1, kTop, 0) + Varints({1, 1, 0}), StatusCode::kCorruption,
                "group entry 0 (at byte 48) lies past the summary's end offset");
}

TEST(KafkaIndexSummaryTest, ParseRefusesAGroupOfNoRecordsOrMoreThanItsOffsets) {
  ExpectRefused(Header(64, 1, 1, 0, 100, 0) + Varints({0, 0, 0}), StatusCode::kCorruption,
                "group entry 0 (at byte 48) lists 0 records for offsets [0, 64) (1 to 64)");
  ExpectRefused(Header(64, 65, 1, 0, 100, 0) + Varints({0, 65, 0}), StatusCode::kCorruption,
                "lists 65 records for offsets [0, 64) (1 to 64)");
  // A first group cut by `first` and a last group cut by `end`.
  ExpectRefused(Header(64, 29, 1, 100, 1000, 0) + Varints({0, 29, 0}), StatusCode::kCorruption,
                "lists 29 records for offsets [100, 128) (1 to 28)");
  ExpectAccepted(Header(64, 28, 1, 100, 1000, 0) + Varints({0, 28, 0}));
  ExpectRefused(Header(64, 41, 1, 100, 1000, 0) + Varints({14, 41, 0}), StatusCode::kCorruption,
                "lists 41 records for offsets [960, 1000) (1 to 40)");
  ExpectAccepted(Header(64, 40, 1, 100, 1000, 0) + Varints({14, 40, 0}));
  // The last offset below 2^64: one offset, one record at most.
  ExpectRefused(Header(64, 1, 1, kTop - 1, kTop, 0) + Varints({0, 2, 0}), StatusCode::kCorruption,
                "lists 2 records for offsets [18446744073709551614, 18446744073709551615) (1 to 1)");
  // A huge record count in a group.
  ExpectRefused(Header(kMaxIndexSummaryGroup, 1, 1, 0, kTop, 0) + Varints({0, kTop, 0}), StatusCode::kCorruption,
                "lists 18446744073709551615 records for offsets [0, 1048576)");
}

TEST(KafkaIndexSummaryTest, ParseRefusesATokenSumPastTwoToTheSixtyFour) {
  ExpectRefused(Header(1, 2, 2, 0, 10, 0) + Varints({0, 1, kTop, 0, 1, 1}), StatusCode::kCorruption,
                "the groups' token ids pass 2^64 at group entry 1 (at byte 60)");
}

TEST(KafkaIndexSummaryTest, ParseRefusesBytesLeftOver) {
  // One group of 3 bytes and a fourth byte that the count allows (at most 30).
  ExpectRefused(Header(1, 1, 1, 0, 10, 4) + Varints({0, 1, 4}) + std::string(1, '\0'), StatusCode::kCorruption,
                "1 bytes follow its last group's entry, from byte 51");
}

TEST(KafkaIndexSummaryTest, ParseRefusesARecordTotalOtherThanTheHeaders) {
  ExpectRefused(Header(64, 4, 1, 0, 100, 0) + Varints({0, 3, 0}), StatusCode::kCorruption,
                "its groups hold 3 records, but its header (bytes 16-19) says 4");
  std::string bytes = Encode(0, 64, 0, 1000, {{1, 7}, {4, 8}, {500, 1}});
  PutU32(&bytes, 16, 2);
  ExpectRefused(bytes, StatusCode::kCorruption, "its groups hold 3 records, but its header (bytes 16-19) says 2");
}

TEST(KafkaIndexSummaryTest, ParseRefusesATokenTotalOtherThanTheHeaders) {
  std::string bytes = Encode(0, 64, 0, 1000, {{1, 7}, {4, 8}, {500, 1}});
  PutU64(&bytes, 40, 17);
  ExpectRefused(bytes, StatusCode::kCorruption, "its groups hold 16 token ids, but its header (bytes 40-47) says 17");
  PutU64(&bytes, 40, 0);
  ExpectRefused(bytes, StatusCode::kCorruption, "its groups hold 16 token ids, but its header (bytes 40-47) says 0");
}

TEST(KafkaIndexSummaryTest, EveryTruncationAndBitFlipOfASummaryIsRefusedOrConsistent) {
  const std::string good = Encode(9, 64, 100, 100000, {{100, 1}, {127, 2}, {128, 300}, {5000, 70000}, {99999, 5}});
  for (size_t n = 0; n < good.size(); ++n) {
    auto parsed = ParseIndexSummary(Bytes(good.substr(0, n)));
    EXPECT_FALSE(parsed.ok()) << "accepted the first " << n << " bytes";
  }
  for (size_t i = 0; i < good.size() * 8; ++i) {
    std::string bad = good;
    bad[i / 8] = static_cast<char>(bad[i / 8] ^ (1 << (i % 8)));
    auto parsed = ParseIndexSummary(Bytes(bad));
    if (!parsed.ok()) {
      EXPECT_TRUE(parsed.status().code() == StatusCode::kCorruption ||
                  parsed.status().code() == StatusCode::kUnsupported)
          << parsed.status().ToString();
      EXPECT_FALSE(parsed.status().message().empty());
      continue;
    }
    // Some flips give another valid summary (another partition, a wider
    // range): it walks to what its header says and encodes back to itself.
    const std::vector<IndexSummaryGroup> walked = Walk(*parsed);
    ASSERT_EQ(walked.size(), parsed->groups) << "bit " << i;
    uint64_t records = 0, tokens = 0;
    std::vector<IndexChunkEntry> entries;
    for (const IndexSummaryGroup& g : walked) {
      records += g.records;
      tokens += g.tokens;
      for (uint64_t k = 0; k < g.records; ++k) entries.push_back({g.first + k, k == 0 ? g.tokens : 0});
    }
    EXPECT_EQ(records, parsed->records) << "bit " << i;
    EXPECT_EQ(tokens, parsed->tokens) << "bit " << i;
    EXPECT_EQ(Encode(parsed->partition, parsed->group, parsed->first, parsed->end, entries), bad) << "bit " << i;
  }
}

}  // namespace
}  // namespace tokenfeed::topic
