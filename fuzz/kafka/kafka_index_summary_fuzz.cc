// Fuzzes one summary record of a Kafka topic's token index
// (topic/kafka_index_summary.h) as ParseIndexSummary meets it from a
// broker: the input is the summary's bytes. A refusal needs a message and
// is Corruption or Unsupported. An accepted summary is walked, and what
// ParseIndexSummary promises must hold: the walk yields exactly `groups`
// groups, each non-empty within [first, end) and inside one slot of
// `group` offsets, holding 1 to its offsets' records, in increasing order
// without overlap, whose records and ids add up to the header's totals.
// Each group then becomes `records` entries at its first offsets (all its
// ids on the first), and EncodeIndexSummary of those must give back
// exactly the input: the parser takes varints only in their shortest form,
// so a summary has one encoding. Aborts on a finding.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "topic/kafka_index_summary.h"

namespace {

namespace t = tokenfeed::topic;

[[noreturn]] void Finding(const std::string& what) {
  std::fprintf(stderr, "kafka_index_summary_fuzz: %s\n", what.c_str());
  std::abort();
}

#define CHECK(cond, what)       \
  do {                          \
    if (!(cond)) Finding(what); \
  } while (0)

std::string Num(uint64_t v) { return std::to_string(v); }

std::vector<t::IndexSummaryGroup> Walk(const t::IndexSummaryView& summary) {
  std::vector<t::IndexSummaryGroup> out;
  t::IndexSummaryWalker walker(summary);
  t::IndexSummaryGroup g;
  // A walk of more groups than the count (at most 2^16) is a finding; stop
  // one past it.
  while (out.size() <= summary.groups && walker.Next(&g)) out.push_back(g);
  return out;
}

// The groups are what ParseIndexSummary promises for `summary`.
void CheckGroups(const t::IndexSummaryView& summary, const std::vector<t::IndexSummaryGroup>& groups,
                 const char* what) {
  const std::string where = std::string(what) + " [" + Num(summary.first) + ", " + Num(summary.end) +
                            ") group " + Num(summary.group);
  CHECK(summary.group >= 1 && summary.group <= t::kMaxIndexSummaryGroup, where + ": the group is accepted");
  CHECK(summary.first < summary.end, where + ": first >= end accepted");
  CHECK(summary.records <= t::kMaxIndexChunkRecords && summary.records <= summary.end - summary.first,
        where + ": " + Num(summary.records) + " records accepted");
  CHECK(groups.size() == summary.groups,
        where + ": the walk gave " + Num(groups.size()) + " groups, the header counts " + Num(summary.groups));
  uint64_t records = 0, tokens = 0;
  for (size_t i = 0; i < groups.size(); ++i) {
    const t::IndexSummaryGroup& g = groups[i];
    const std::string at = where + ": group " + Num(i) + " [" + Num(g.first) + ", " + Num(g.end) + ")";
    CHECK(g.first < g.end, at + " is empty");
    CHECK(g.first >= summary.first && g.end <= summary.end, at + " is outside");
    CHECK(g.first / summary.group == (g.end - 1) / summary.group, at + " spans two slots");
    // A group is a whole slot, cut only by first and end.
    CHECK(g.first == summary.first || g.first % summary.group == 0, at + " starts inside a slot");
    CHECK(g.end == summary.end || g.end % summary.group == 0, at + " ends inside a slot");
    CHECK(i == 0 || g.first >= groups[i - 1].end, at + " does not follow the group before");
    CHECK(g.records >= 1 && g.records <= g.end - g.first, at + " holds " + Num(g.records) + " records");
    records += g.records;
    CHECK(!__builtin_add_overflow(tokens, g.tokens, &tokens), where + ": the token ids pass 2^64");
  }
  CHECK(records == summary.records,
        where + ": the groups hold " + Num(records) + " records, the header says " + Num(summary.records));
  CHECK(tokens == summary.tokens,
        where + ": the groups hold " + Num(tokens) + " token ids, the header says " + Num(summary.tokens));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> input(data, size);
  auto parsed = t::ParseIndexSummary(input);
  if (!parsed.ok()) {
    CHECK(!parsed.status().message().empty(), "a refusal without a message");
    CHECK(parsed.status().code() == tokenfeed::StatusCode::kCorruption ||
              parsed.status().code() == tokenfeed::StatusCode::kUnsupported,
          "a refusal that is neither Corruption nor Unsupported: " + parsed.status().ToString());
    return 0;
  }
  const t::IndexSummaryView& summary = *parsed;
  CHECK(summary.body.data() == data + t::kIndexSummaryHeaderSize &&
            summary.body.size() == size - t::kIndexSummaryHeaderSize,
        "the body does not view the input past the header");
  const std::vector<t::IndexSummaryGroup> groups = Walk(summary);
  CheckGroups(summary, groups, "input");

  // Each group's records at its first offsets, its ids on the first one.
  std::vector<t::IndexChunkEntry> entries;
  entries.reserve(summary.records);
  for (const t::IndexSummaryGroup& g : groups) {
    for (uint64_t k = 0; k < g.records; ++k) entries.push_back({g.first + k, k == 0 ? g.tokens : 0});
  }
  auto encoded = t::EncodeIndexSummary(summary.partition, summary.group, summary.first, summary.end, entries);
  CHECK(encoded.ok(), "EncodeIndexSummary refuses the groups of an accepted summary: " + encoded.status().ToString());
  const std::string& bytes = *encoded;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  // The header is the same byte for byte (version 1, zero reserved bytes).
  CHECK(bytes.size() >= t::kIndexSummaryHeaderSize &&
            std::string_view(bytes).substr(0, t::kIndexSummaryHeaderSize) ==
                in.substr(0, t::kIndexSummaryHeaderSize),
        "the encoding's header differs from the input's");
  // Shortest-form varints only: one summary, one encoding.
  CHECK(bytes == in,
        "the encoding differs from the input (" + Num(bytes.size()) + " bytes against " + Num(size) + ")");
  return 0;
}
