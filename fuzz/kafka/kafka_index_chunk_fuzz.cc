// Fuzzes one chunk of a Kafka topic's token index (topic/kafka_index_chunk.h)
// as ParseIndexChunk meets it from a broker: the input is the chunk's bytes.
// A refusal needs a message. An accepted chunk is walked, and what
// ParseIndexChunk promises must hold: the walk yields exactly `records`
// entries, their offsets lie in [first, end) and increase, and their token
// ids add up to the header's total. The walked entries encode again
// (EncodeIndexChunk accepts them) to exactly the input: the parser takes
// varints only in their shortest form, so a chunk has one encoding; and
// the encoding parses to the same header and entries. Aborts on a finding.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "topic/kafka_index_chunk.h"

namespace {

namespace t = tokenfeed::topic;

[[noreturn]] void Finding(const std::string& what) {
  std::fprintf(stderr, "kafka_index_chunk_fuzz: %s\n", what.c_str());
  std::abort();
}

#define CHECK(cond, what)                \
  do {                                   \
    if (!(cond)) Finding(what);          \
  } while (0)

std::string Num(uint64_t v) { return std::to_string(v); }

std::vector<t::IndexChunkEntry> Walk(const t::IndexChunkView& chunk) {
  std::vector<t::IndexChunkEntry> out;
  t::IndexChunkWalker walker(chunk);
  t::IndexChunkEntry e;
  // A walk of more entries than the count (at most 2^16) is a finding; stop
  // one past it.
  while (out.size() <= chunk.records && walker.Next(&e)) out.push_back(e);
  return out;
}

// The entries are what ParseIndexChunk promises for `chunk`.
void CheckEntries(const t::IndexChunkView& chunk, const std::vector<t::IndexChunkEntry>& entries, const char* what) {
  const std::string where = std::string(what) + " [" + Num(chunk.first) + ", " + Num(chunk.end) + ")";
  CHECK(chunk.first < chunk.end, where + ": first >= end accepted");
  CHECK(chunk.records <= t::kMaxIndexChunkRecords, where + ": " + Num(chunk.records) + " records accepted");
  CHECK(entries.size() == chunk.records,
        where + ": the walk gave " + Num(entries.size()) + " entries, the header counts " + Num(chunk.records));
  uint64_t total = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const uint64_t o = entries[i].offset;
    CHECK(o >= chunk.first && o < chunk.end, where + ": entry " + Num(i) + " at offset " + Num(o) + " is outside");
    CHECK(i == 0 || o > entries[i - 1].offset, where + ": entry " + Num(i) + " at offset " + Num(o) + " does not increase");
    CHECK(!__builtin_add_overflow(total, entries[i].tokens, &total), where + ": the token ids pass 2^64");
  }
  CHECK(total == chunk.tokens, where + ": the entries hold " + Num(total) + " token ids, the header says " +
                                   Num(chunk.tokens));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> input(data, size);
  auto parsed = t::ParseIndexChunk(input);
  if (!parsed.ok()) {
    CHECK(!parsed.status().message().empty(), "a refusal without a message");
    CHECK(parsed.status().code() == tokenfeed::StatusCode::kCorruption ||
              parsed.status().code() == tokenfeed::StatusCode::kUnsupported,
          "a refusal that is neither Corruption nor Unsupported: " + parsed.status().ToString());
    return 0;
  }
  const t::IndexChunkView& chunk = *parsed;
  CHECK(chunk.body.data() == data + t::kIndexChunkHeaderSize &&
            chunk.body.size() == size - t::kIndexChunkHeaderSize,
        "the body does not view the input past the header");
  const std::vector<t::IndexChunkEntry> entries = Walk(chunk);
  CheckEntries(chunk, entries, "input");

  auto encoded = t::EncodeIndexChunk(chunk.partition, chunk.first, chunk.end, entries);
  CHECK(encoded.ok(), "EncodeIndexChunk refuses the entries of an accepted chunk: " + encoded.status().ToString());
  const std::string& bytes = *encoded;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  // The header is the same byte for byte (version 1, zero reserved bytes).
  CHECK(bytes.size() >= t::kIndexChunkHeaderSize &&
            std::string_view(bytes).substr(0, t::kIndexChunkHeaderSize) == in.substr(0, t::kIndexChunkHeaderSize),
        "the encoding's header differs from the input's");
  // Shortest-form varints only: one chunk, one encoding.
  CHECK(bytes == in, "the encoding differs from the input (" + Num(bytes.size()) + " bytes against " + Num(size) + ")");
  auto again = t::ParseIndexChunk({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  CHECK(again.ok(), "ParseIndexChunk refuses what EncodeIndexChunk wrote: " + again.status().ToString());
  CHECK(again->partition == chunk.partition && again->records == chunk.records && again->first == chunk.first &&
            again->end == chunk.end && again->tokens == chunk.tokens,
        "the encoding parses to another header");
  const std::vector<t::IndexChunkEntry> walked = Walk(*again);
  CheckEntries(*again, walked, "encoding");
  for (size_t i = 0; i < entries.size(); ++i) {
    CHECK(walked[i].offset == entries[i].offset && walked[i].tokens == entries[i].tokens,
          "the encoding's entry " + Num(i) + " differs from the input's");
  }
  return 0;
}
