#include "topic/kafka_index_chunk.h"

#include <cstring>

#include "topic/index_bytes.h"

namespace tokenfeed::topic {
namespace {

using namespace index_bytes;

constexpr char kMagic[4] = {'T', 'F', 'K', 'X'};
constexpr uint8_t kVersion = 1;

std::string Num(uint64_t v) { return std::to_string(v); }

}  // namespace

Result<std::string> EncodeIndexChunk(uint32_t partition, uint64_t first, uint64_t end,
                                     std::span<const IndexChunkEntry> entries) {
  if (first >= end || entries.size() > kMaxIndexChunkRecords || entries.size() > end - first) {
    return Status::InvalidArgument("an index chunk needs first < end and at most " +
                                   Num(kMaxIndexChunkRecords) + " records within [first, end); got [" + Num(first) +
                                   ", " + Num(end) + ") with " + Num(entries.size()) + " records");
  }
  std::string body;
  uint64_t next = first, total = 0;
  for (const IndexChunkEntry& e : entries) {
    if (e.offset < next || e.offset >= end) {
      return Status::InvalidArgument("index chunk entry at offset " + Num(e.offset) + " is not within [" +
                                     Num(next) + ", " + Num(end) + ")");
    }
    if (__builtin_add_overflow(total, e.tokens, &total)) {
      return Status::InvalidArgument("index chunk tokens exceed 2^64");
    }
    PutVarint(&body, e.offset - next);
    PutVarint(&body, e.tokens);
    next = e.offset + 1;
  }
  std::string out(kMagic, sizeof(kMagic));
  out.push_back(static_cast<char>(kVersion));
  out.append(3, '\0');
  PutU32(&out, partition);
  PutU32(&out, static_cast<uint32_t>(entries.size()));
  PutU64(&out, first);
  PutU64(&out, end);
  PutU64(&out, total);
  out += body;
  return out;
}

Result<IndexChunkView> ParseIndexChunk(std::span<const uint8_t> bytes) {
  if (bytes.size() < kIndexChunkHeaderSize) {
    return Status::Corruption("a token index chunk of " + Num(bytes.size()) + " bytes is shorter than its " +
                              Num(kIndexChunkHeaderSize) + "-byte header");
  }
  const uint8_t* p = bytes.data();
  if (std::memcmp(p, kMagic, sizeof(kMagic)) != 0) {
    return Status::Corruption("not a token index chunk: bytes 0-3 are not \"TFKX\"");
  }
  if (p[4] == 0) return Status::Corruption("token index chunk version 0 (byte 4) is not a version");
  if (p[4] > kVersion) {
    return Status::Unsupported("token index chunk version " + Num(p[4]) + " is newer than this build reads (" +
                               Num(kVersion) + "): use a newer tokenfeed");
  }
  if (p[5] != 0 || p[6] != 0 || p[7] != 0) {
    return Status::Corruption("token index chunk: reserved bytes 5-7 are not zero");
  }
  IndexChunkView c;
  c.partition = GetU32(p + 8);
  c.records = GetU32(p + 12);
  c.first = GetU64(p + 16);
  c.end = GetU64(p + 24);
  c.tokens = GetU64(p + 32);
  c.body = bytes.subspan(kIndexChunkHeaderSize);
  if (c.first >= c.end) {
    return Status::Corruption("token index chunk: its offsets [" + Num(c.first) + ", " + Num(c.end) +
                              ") (bytes 16-31) are empty or reversed");
  }
  if (c.records > kMaxIndexChunkRecords || c.records > c.end - c.first) {
    return Status::Corruption("token index chunk: " + Num(c.records) + " records (bytes 12-15) cannot lie in " +
                              "offsets [" + Num(c.first) + ", " + Num(c.end) + ") (at most " +
                              Num(kMaxIndexChunkRecords) + " a chunk)");
  }
  // Each entry takes at least two bytes: the body bounds the count too.
  if (c.body.size() < 2 * uint64_t{c.records} || c.body.size() > 20 * uint64_t{c.records}) {
    return Status::Corruption("token index chunk: " + Num(c.body.size()) + " bytes of entries cannot hold " +
                              Num(c.records) + " records (2 to 20 bytes each)");
  }
  const uint8_t* at = c.body.data();
  const uint8_t* end = at + c.body.size();
  uint64_t next = c.first, total = 0;
  for (uint32_t i = 0; i < c.records; ++i) {
    const size_t pos = kIndexChunkHeaderSize + static_cast<size_t>(at - c.body.data());
    uint64_t skip = 0, tokens = 0;
    if (!GetVarint(&at, end, &skip) || !GetVarint(&at, end, &tokens)) {
      return Status::Corruption("token index chunk: record " + Num(i) + "'s entry at byte " + Num(pos) +
                                " is cut short or is not a shortest-form varint of at most 64 bits");
    }
    uint64_t offset = 0;
    if (__builtin_add_overflow(next, skip, &offset)) {
      return Status::Corruption("token index chunk: record " + Num(i) + " (entry at byte " + Num(pos) +
                                ") skips past offset 2^64");
    }
    if (offset >= c.end) {
      return Status::Corruption("token index chunk: record " + Num(i) + " (entry at byte " + Num(pos) +
                                ") lies at offset " + Num(offset) + ", past the chunk's end offset " + Num(c.end));
    }
    if (__builtin_add_overflow(total, tokens, &total)) {
      return Status::Corruption("token index chunk: the records' token ids pass 2^64 at record " + Num(i) +
                                " (entry at byte " + Num(pos) + ")");
    }
    next = offset + 1;
  }
  if (at != end) {
    return Status::Corruption("token index chunk: " + Num(static_cast<uint64_t>(end - at)) +
                              " bytes follow its last record's entry, from byte " +
                              Num(kIndexChunkHeaderSize + static_cast<uint64_t>(at - c.body.data())));
  }
  if (total != c.tokens) {
    return Status::Corruption("token index chunk: its records hold " + Num(total) + " token ids, but its header " +
                              "(bytes 32-39) says " + Num(c.tokens));
  }
  return c;
}

bool IndexChunkWalker::Next(IndexChunkEntry* entry) {
  if (at_ == end_) return false;
  uint64_t skip = 0, tokens = 0;
  // Checked by ParseIndexChunk: both varints are there and in range.
  (void)GetVarint(&at_, end_, &skip);
  (void)GetVarint(&at_, end_, &tokens);
  entry->offset = next_offset_ + skip;
  entry->tokens = tokens;
  next_offset_ = entry->offset + 1;
  return true;
}

}  // namespace tokenfeed::topic
