// Replay: any global step of a loader run, produced again from a state the
// run saved, with each row's provenance -- the record slices it was packed
// from and the file and line each record came from (docs/replay.md).
//
// A state carries the run's settings, snapshot and step shape (batch_size,
// world_size, exact weights: its "run" object), so a state file and the
// topics are all replay needs. The step is produced by the loader's own
// pipeline (the same code that made the batches), started at the state's
// position when the step is at or after it (a seek, as resume does; only
// the windows from there to the step are read) -- or at the latest other
// state given (ReplayOptions::other_states) at or before it -- and at the
// run's start otherwise (the windows from the start are read). Rounds (epochs=N) go on
// as a new iteration does after the end. Not thread-safe per call; calls
// are independent.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tokenfeed/loader.h"
#include "tokenfeed/status.h"

namespace tokenfeed {

// One run of one record's tokens in a row. The row's tokens are, piece by
// piece in order: the loader's BOS when `bos`, the record's stored ids
// [token_start, token_end), the loader's EOS when `eos`; then, unpacked
// (pack=false), `padding` pad_id tokens (ReplayRow).
struct ReplayPiece {
  uint32_t source = 0;  // index into the state's sources
  std::string uri;
  uint32_t partition = 0;
  uint64_t offset = 0;
  uint32_t token_start = 0, token_end = 0;  // of the record's stored ids
  uint32_t stored = 0;                      // ids the record stores
  bool bos = false, eos = false;
  // Where the record's document came from (record.h): "file" (the input's
  // path, the line of the document's first byte and that byte's offset) or
  // "message" (a raw topic's URI as path, the message's partition as line
  // and its offset as byte_offset).
  std::string source_kind;
  std::string source_path;
  uint64_t source_line = 0;
  uint64_t source_byte_offset = 0;
};

struct ReplayRow {
  uint64_t step = 0;
  uint32_t rank = 0;
  uint32_t row = 0;
  uint32_t source = 0;  // the source the mixer drew the row from
  std::vector<ReplayPiece> pieces;
  uint32_t padding = 0;           // pad_id tokens at the end (pack=false only)
  std::vector<int64_t> input_ids;  // the row as the loader yields it
  std::vector<int64_t> labels;
};

struct ReplayOptions {
  // nullopt: every rank's rows (a sharded state must then hold every shard:
  // one merged with MergeLoaderStates, or one of a single rank).
  std::optional<uint32_t> rank;
  // The step shape; default: the state's (its "run"). A state written before
  // it carried one needs both.
  std::optional<uint32_t> batch_size, world_size;
  // Other states of the same run (earlier checkpoints): the replay starts
  // from the latest of them and the state at or before the step (and
  // holding the shards it reads), so that a step before the state need not
  // be counted from the run's start. InvalidArgument for one of another run.
  std::vector<std::string> other_states;
  std::vector<std::string> kafka_properties;
  uint32_t kafka_timeout_ms = 30000;
};

struct ReplayedStep {
  uint64_t step = 0;
  uint32_t batch_size = 0, world_size = 0;
  std::vector<ReplayRow> rows;  // by rank, then row
  // What it cost: where the pipeline started (the state's step, or 0 for
  // the run's start) and the steps counted past (lengths only, no copy)
  // before this one.
  uint64_t started_at_step = 0;
  uint64_t steps_skipped = 0;
  // Records read from the topics to produce it: the step's windows (and one
  // read ahead per source). The steps counted past read none from an
  // embedded log, whose token index gives their documents' lengths; from
  // Kafka they read their windows.
  uint64_t records_read = 0;
};

// Global step `step` (0-based, counted in the state's batch_size x
// world_size) of the run `state_json` belongs to. InvalidArgument for a
// state that is not one, lacks its settings, or whose sizes do not fit;
// errors from the topics name the URI, partition and offset.
Result<ReplayedStep> ReplayStep(const std::string& state_json, uint64_t step, const ReplayOptions& options = {});

// The loader options a state was saved with (sources with their exact
// weights when the state has them, seq_len, seed, ... and its snapshot),
// batch and world size from its "run" when it has one.
Result<LoaderOptions> LoaderOptionsFromState(const std::string& state_json);

}  // namespace tokenfeed
