// What a checkpoint has seen: from a loader state, the records of each
// source whose documents the run consumed up to the state (whole, as ranges
// of offsets; in part, with the tokens taken), and whether one document is
// among them (docs/replay.md). Exact: it asks the loader's own streams which
// blocks each position has passed (no record is read for those) and reads
// only each position's current window (whose records are shuffled) to name
// the documents taken from it. Calls are independent; not thread-safe per call.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tokenfeed/status.h"

namespace tokenfeed {

struct SeenPartial {
  uint32_t partition = 0;
  uint64_t offset = 0;
  uint32_t tokens_taken = 0;  // of the document as the loader counts it (its BOS/EOS included)
  uint32_t tokens = 0;
};

struct SeenSource {
  std::string uri;
  // Every record of the snapshot was consumed whole at least once (a pass
  // over the source was completed).
  bool all = false;
  // Per partition (by index), the offset ranges [first, end) consumed whole.
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> whole;
  uint64_t whole_offsets = 0;  // offsets in those ranges (records; on a transactional Kafka topic, markers too)
  std::vector<SeenPartial> partial;  // documents consumed in part (one per stream: shard x source)
  uint64_t samples = 0;              // samples drawn from the source
  // Tokens drawn (samples x seq_len, BOS/EOS included) when packed; nullopt
  // unpacked, where a sample is one document truncated to seq_len.
  std::optional<uint64_t> tokens;
};

struct SeenReport {
  uint64_t samples = 0;               // global samples before the state
  std::optional<uint64_t> step;       // the state's step, when it says its run's sizes
  std::vector<SeenSource> sources;
};

struct SeenOptions {
  std::vector<std::string> kafka_properties;
  uint32_t kafka_timeout_ms = 30000;
};

// InvalidArgument for a state that is not one or lacks its settings, and for
// a sharded state that lacks a shard (merge every rank's first).
Result<SeenReport> Seen(const std::string& state_json, const SeenOptions& options = {});

enum class SeenAnswer { kNo, kPartly, kYes };
const char* SeenAnswerName(SeenAnswer a);  // "no", "partly", "yes"

// The record at `uri` partition `partition` offset `offset`.
SeenAnswer SeenContains(const SeenReport& report, const std::string& uri, uint32_t partition, uint64_t offset);

// The records of the report's sources whose document is line `line` of
// `path` (as the record stores it, record.h): found by a binary search of
// each partition, whose records an ingest writes in its input order (sorted
// paths, then lines), so a few reads per partition. As {source index,
// partition, offset}; empty when none.
struct SeenRecordRef {
  uint32_t source = 0;
  uint32_t partition = 0;
  uint64_t offset = 0;
};
Result<std::vector<SeenRecordRef>> FindRecordsOfLine(const std::string& state_json, const std::string& path,
                                                     uint64_t line, const SeenOptions& options = {});

}  // namespace tokenfeed
