#include "topic/kafka_index_summary.h"

#include <cstring>

#include "topic/index_bytes.h"

namespace tokenfeed::topic {
namespace {

using namespace index_bytes;

constexpr char kMagic[4] = {'T', 'F', 'K', 'S'};
constexpr uint8_t kVersion = 1;

std::string Num(uint64_t v) { return std::to_string(v); }

// Offsets [first, end) of group slot `slot` (from 0) of a summary starting
// at `first` and ending at `end`, with groups of `group` offsets; false
// when the slot starts at or past `end` (or past 2^64).
bool SlotRange(uint64_t first, uint64_t end, uint64_t group, uint64_t slot, uint64_t* lo, uint64_t* hi) {
  const uint64_t base = first / group;
  uint64_t s = 0, start = 0;
  if (__builtin_add_overflow(base, slot, &s) || __builtin_mul_overflow(s, group, &start)) return false;
  if (start < first) start = first;  // slot 0
  if (start >= end) return false;
  uint64_t stop = 0;
  if (__builtin_add_overflow(start - start % group, group, &stop) || stop > end) stop = end;
  *lo = start;
  *hi = stop;
  return true;
}

}  // namespace

Result<std::string> EncodeIndexSummary(uint32_t partition, uint32_t group, uint64_t first, uint64_t end,
                                       std::span<const IndexChunkEntry> entries) {
  if (group == 0 || group > kMaxIndexSummaryGroup) {
    return Status::InvalidArgument("an index summary's group must be 1 to " + Num(kMaxIndexSummaryGroup) +
                                   " offsets; got " + Num(group));
  }
  if (first >= end || entries.size() > kMaxIndexChunkRecords || entries.size() > end - first) {
    return Status::InvalidArgument("an index summary needs first < end and at most " +
                                   Num(kMaxIndexChunkRecords) + " records within [first, end); got [" + Num(first) +
                                   ", " + Num(end) + ") with " + Num(entries.size()) + " records");
  }
  std::string body;
  uint64_t next = first, total = 0;
  uint32_t listed = 0;
  const uint64_t base = first / group;
  uint64_t next_slot = 0;  // the slot the next listed group's skip counts from
  size_t i = 0;
  while (i < entries.size()) {
    const IndexChunkEntry& e = entries[i];
    if (e.offset < next || e.offset >= end) {
      return Status::InvalidArgument("index summary entry at offset " + Num(e.offset) + " is not within [" +
                                     Num(next) + ", " + Num(end) + ")");
    }
    const uint64_t slot = e.offset / group - base;
    uint64_t records = 0, tokens = 0;
    for (; i < entries.size() && entries[i].offset >= next && entries[i].offset < end &&
           entries[i].offset / group - base == slot;
         ++i) {
      if (__builtin_add_overflow(tokens, entries[i].tokens, &tokens) ||
          __builtin_add_overflow(total, entries[i].tokens, &total)) {
        return Status::InvalidArgument("index summary tokens exceed 2^64");
      }
      records += 1;
      next = entries[i].offset + 1;
    }
    PutVarint(&body, slot - next_slot);
    PutVarint(&body, records);
    PutVarint(&body, tokens);
    next_slot = slot + 1;
    listed += 1;
  }
  std::string out(kMagic, sizeof(kMagic));
  out.push_back(static_cast<char>(kVersion));
  out.append(3, '\0');
  PutU32(&out, partition);
  PutU32(&out, group);
  PutU32(&out, static_cast<uint32_t>(entries.size()));
  PutU32(&out, listed);
  PutU64(&out, first);
  PutU64(&out, end);
  PutU64(&out, total);
  out += body;
  return out;
}

Result<IndexSummaryView> ParseIndexSummary(std::span<const uint8_t> bytes) {
  if (bytes.size() < kIndexSummaryHeaderSize) {
    return Status::Corruption("a token index summary of " + Num(bytes.size()) + " bytes is shorter than its " +
                              Num(kIndexSummaryHeaderSize) + "-byte header");
  }
  const uint8_t* p = bytes.data();
  if (std::memcmp(p, kMagic, sizeof(kMagic)) != 0) {
    return Status::Corruption("not a token index summary: bytes 0-3 are not \"TFKS\"");
  }
  if (p[4] == 0) return Status::Corruption("token index summary version 0 (byte 4) is not a version");
  if (p[4] > kVersion) {
    return Status::Unsupported("token index summary version " + Num(p[4]) + " is newer than this build reads (" +
                               Num(kVersion) + "): use a newer tokenfeed");
  }
  if (p[5] != 0 || p[6] != 0 || p[7] != 0) {
    return Status::Corruption("token index summary: reserved bytes 5-7 are not zero");
  }
  IndexSummaryView s;
  s.partition = GetU32(p + 8);
  s.group = GetU32(p + 12);
  s.records = GetU32(p + 16);
  s.groups = GetU32(p + 20);
  s.first = GetU64(p + 24);
  s.end = GetU64(p + 32);
  s.tokens = GetU64(p + 40);
  s.body = bytes.subspan(kIndexSummaryHeaderSize);
  if (s.group == 0 || s.group > kMaxIndexSummaryGroup) {
    return Status::Corruption("token index summary: its group of " + Num(s.group) + " offsets (bytes 12-15) is " +
                              "not 1 to " + Num(kMaxIndexSummaryGroup));
  }
  if (s.first >= s.end) {
    return Status::Corruption("token index summary: its offsets [" + Num(s.first) + ", " + Num(s.end) +
                              ") (bytes 24-39) are empty or reversed");
  }
  if (s.records > kMaxIndexChunkRecords || s.records > s.end - s.first) {
    return Status::Corruption("token index summary: " + Num(s.records) + " records (bytes 16-19) cannot lie in " +
                              "offsets [" + Num(s.first) + ", " + Num(s.end) + ") (at most " +
                              Num(kMaxIndexChunkRecords) + " a summary)");
  }
  if (s.groups > s.records || (s.records > 0 && s.groups == 0)) {
    return Status::Corruption("token index summary: " + Num(s.groups) + " groups listed (bytes 20-23) for " +
                              Num(s.records) + " records (each listed group holds at least one)");
  }
  // Each entry takes 3 to 23 bytes (a group holds at most 2^20 records: 3
  // bytes): the body bounds the count too.
  if (s.body.size() < 3 * uint64_t{s.groups} || s.body.size() > 23 * uint64_t{s.groups}) {
    return Status::Corruption("token index summary: " + Num(s.body.size()) + " bytes of entries cannot hold " +
                              Num(s.groups) + " groups (3 to 23 bytes each)");
  }
  const uint8_t* at = s.body.data();
  const uint8_t* end = at + s.body.size();
  uint64_t next_slot = 0, records = 0, total = 0;
  for (uint32_t i = 0; i < s.groups; ++i) {
    const size_t pos = kIndexSummaryHeaderSize + static_cast<size_t>(at - s.body.data());
    uint64_t skip = 0, n = 0, tokens = 0;
    if (!GetVarint(&at, end, &skip) || !GetVarint(&at, end, &n) || !GetVarint(&at, end, &tokens)) {
      return Status::Corruption("token index summary: group entry " + Num(i) + " at byte " + Num(pos) +
                                " is cut short or is not a shortest-form varint of at most 64 bits");
    }
    uint64_t slot = 0, lo = 0, hi = 0;
    if (__builtin_add_overflow(next_slot, skip, &slot) || !SlotRange(s.first, s.end, s.group, slot, &lo, &hi)) {
      return Status::Corruption("token index summary: group entry " + Num(i) + " (at byte " + Num(pos) +
                                ") lies past the summary's end offset " + Num(s.end));
    }
    if (n == 0 || n > hi - lo) {
      return Status::Corruption("token index summary: group entry " + Num(i) + " (at byte " + Num(pos) +
                                ") lists " + Num(n) + " records for offsets [" + Num(lo) + ", " + Num(hi) +
                                ") (1 to " + Num(hi - lo) + ")");
    }
    if (__builtin_add_overflow(total, tokens, &total)) {
      return Status::Corruption("token index summary: the groups' token ids pass 2^64 at group entry " + Num(i) +
                                " (at byte " + Num(pos) + ")");
    }
    records += n;  // at most 2^32 entries of at most 2^20 records each: no overflow
    next_slot = slot + 1;
  }
  if (at != end) {
    return Status::Corruption("token index summary: " + Num(static_cast<uint64_t>(end - at)) +
                              " bytes follow its last group's entry, from byte " +
                              Num(kIndexSummaryHeaderSize + static_cast<uint64_t>(at - s.body.data())));
  }
  if (records != s.records) {
    return Status::Corruption("token index summary: its groups hold " + Num(records) + " records, but its header " +
                              "(bytes 16-19) says " + Num(s.records));
  }
  if (total != s.tokens) {
    return Status::Corruption("token index summary: its groups hold " + Num(total) + " token ids, but its " +
                              "header (bytes 40-47) says " + Num(s.tokens));
  }
  return s;
}

IndexSummaryWalker::IndexSummaryWalker(const IndexSummaryView& summary)
    : at_(summary.body.data()),
      end_(summary.body.data() + summary.body.size()),
      first_(summary.first),
      last_(summary.end),
      group_(summary.group),
      next_slot_(0) {}

bool IndexSummaryWalker::Next(IndexSummaryGroup* group) {
  if (at_ == end_) return false;
  uint64_t skip = 0;
  // Checked by ParseIndexSummary: the three varints are there and in range.
  (void)GetVarint(&at_, end_, &skip);
  (void)GetVarint(&at_, end_, &group->records);
  (void)GetVarint(&at_, end_, &group->tokens);
  const uint64_t slot = next_slot_ + skip;
  (void)SlotRange(first_, last_, group_, slot, &group->first, &group->end);
  next_slot_ = slot + 1;
  return true;
}

}  // namespace tokenfeed::topic
