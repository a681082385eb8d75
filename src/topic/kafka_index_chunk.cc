#include "topic/kafka_index_chunk.h"

#include <cstring>

namespace tokenfeed::topic {
namespace {

constexpr char kMagic[4] = {'T', 'F', 'K', 'X'};
constexpr uint8_t kVersion = 1;

void PutU32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void PutU64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}
uint32_t GetU32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
uint64_t GetU64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// A varint of at most 10 bytes, in its shortest form (no final zero byte
// after the first), whose value fits 64 bits; false otherwise (or when the
// bytes end first). Advances *at past it.
bool GetVarint(const uint8_t** at, const uint8_t* end, uint64_t* value) {
  uint64_t v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (*at == end) return false;
    const uint8_t b = *(*at)++;
    const uint64_t part = b & 0x7f;
    if (shift == 63 && part > 1) return false;  // past 64 bits
    v |= part << shift;
    if ((b & 0x80) == 0) {
      if (b == 0 && shift > 0) return false;  // not the shortest form: one chunk, one encoding
      *value = v;
      return true;
    }
  }
  return false;
}

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
