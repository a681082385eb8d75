// The loader's saved state (Loader::State, docs/loader.md "Exact resume") and
// its snapshot as values, with the parsers and writers of their JSON. Only the
// form is checked here: a version this build reads, every field present and
// of its type. Whether a state fits a loader (its sources, settings and batch
// sizes) is Loader::LoadState's check. Pure functions, no I/O, thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "loader/document_order.h"
#include "loader/source_stream.h"
#include "tokenfeed/status.h"

namespace tokenfeed::loader {

inline constexpr int64_t kLoaderStateVersion = 1;
// The version of the state's "consumed" member (token accounting), which a
// state of version 1 may carry or lack (docs/loader.md, "Token accounting").
inline constexpr int64_t kConsumedVersion = 1;

// Per source (in the loader's order), per epoch in increasing order.
using SourceTallies = std::vector<std::vector<EpochTally>>;

// The partitions and offsets one source's stream is built on.
struct SnapshotSource {
  std::string uri;
  std::vector<PartitionRange> partitions;
  friend bool operator==(const SnapshotSource&, const SnapshotSource&) = default;
};

struct Snapshot {
  std::vector<SnapshotSource> sources;  // in the order of the loader's sources
  friend bool operator==(const Snapshot&, const Snapshot&) = default;
};

// One entry of a state's "settings", which name the value of each setting
// the fingerprint covers, so that a refused state can say which differs.
struct StateSetting {
  std::string name;
  std::optional<std::string> value;  // nullopt: the state holds no string there
  friend bool operator==(const StateSetting&, const StateSetting&) = default;
};

// One shard's part of a sharded loader's state (LoaderOptions::shards > 1).
struct ShardState {
  uint32_t shard = 0;
  std::vector<uint64_t> mixer;            // samples this shard drew from each source
  std::vector<SourcePosition> positions;  // each source's shard stream position
  SourceTallies consumed;                 // what this shard put into rows; empty: not counted
  friend bool operator==(const ShardState&, const ShardState&) = default;
};

// How the run that saved a state drew its steps, for replay (replay.h):
// the global step is batch_size * world_size samples, and the sources'
// weights exactly as given (the settings hold them as proportions, rounded).
// Written since states carry it ("run"); absent in older states.
struct RunShape {
  uint32_t batch_size = 0;
  uint32_t world_size = 0;
  std::vector<double> weights;  // by source
  friend bool operator==(const RunShape&, const RunShape&) = default;
};

struct LoaderState {
  std::string fingerprint;                // over the settings (the loader's, hex)
  uint64_t samples = 0;                   // global samples before the position
  // Unsharded (shard_count 1): the one stream's mixer and positions.
  std::vector<uint64_t> mixer;            // samples drawn from each source
  std::vector<SourcePosition> positions;  // each source's stream position
  // Sharded: the number of shards and the shards this state holds (a rank's
  // own, or all of them once merged: MergeLoaderStates), by shard number;
  // mixer and positions are then empty.
  uint32_t shard_count = 1;
  std::vector<ShardState> shards;
  uint64_t epoch_base = 0;                // the first epoch of the state's round
  // Token accounting: tokens and documents the stream put into rows, per
  // source and epoch, counted from global sample consumed_from (0, unless
  // the run resumed from a state that had no counts: its sample then).
  // Unsharded here; sharded in each shard's part. Empty: not counted.
  uint64_t consumed_from = 0;
  SourceTallies consumed;
  // In the order the state lists them; nullopt when it has no "settings"
  // object (its fingerprint still decides whether it loads).
  std::optional<std::vector<StateSetting>> settings;
  Snapshot snapshot;
  std::optional<RunShape> run;            // nullopt in a state written before it was added
  friend bool operator==(const LoaderState&, const LoaderState&) = default;
};

// A snapshot as Loader::Snapshot and TakeSnapshot write it. InvalidArgument
// for text that is not JSON or not a list of {"uri", "partitions"} with
// ranges [start, end], end >= start.
Result<Snapshot> ParseSnapshot(std::string_view json);
std::string SnapshotJson(const Snapshot& snapshot);

// A state as LoaderStateJson writes it. InvalidArgument for text that is not
// a loader state or has a malformed field, Unsupported for another version.
// Fields the state does not know are ignored; "epoch_base" may be absent (0),
// and "run" too (nullopt); "consumed" may be absent (consumed_from is then the
// state's samples and the counts are empty), and Unsupported when of another
// version.
Result<LoaderState> ParseLoaderState(std::string_view json);
// The JSON of Loader::State(); ParseLoaderState reads it back to an equal
// value. Strings are escaped as JSON requires and must be valid UTF-8.
std::string LoaderStateJson(const LoaderState& state);

// One state holding every shard of `states` (the states of all ranks of a
// sharded run, saved at the same step), for a restart with another world
// size. InvalidArgument when they are not of one run and step (fingerprint,
// samples, snapshot, shard count) or a shard is missing; a shard held by
// two states must be the same in both.
Result<LoaderState> MergeLoaderStates(const std::vector<LoaderState>& states);

}  // namespace tokenfeed::loader
