// The loader's settings as named strings, the fingerprint over them that a
// state carries, and the check that a state was saved with the same ones
// (naming each that differs). Everything that shapes the global stream
// except the snapshot (which the state carries) and the world and batch
// sizes (which may change). Not the state's JSON (loader_state.h). Pure
// functions, no I/O, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "loader/loader_state.h"
#include "tokenfeed/loader.h"
#include "tokenfeed/status.h"

namespace tokenfeed::loader {

// (name, value) in a fixed order: the options, then "source i" as URI@proportion.
using LoaderSettings = std::vector<std::pair<std::string, std::string>>;

// What a refused state is told must be the same.
inline constexpr const char* kCheckedSettings =
    "the sources and their weights (as proportions), seq_len, seed, shuffle, block_records, window_blocks, "
    "epochs, shards, follow, pack, bos_id, eos_id, pad_id, cross_document_labels and ignore_index";

// The settings of `options`, with `block_records` the block size each source
// is read with (the option, or its transport's default). Weights count as
// proportions: {A: 7, B: 3} is {A: 0.7, B: 0.3}.
LoaderSettings SettingsOf(const LoaderOptions& options, const std::vector<uint32_t>& block_records);

// 16 hex digits over the settings' values.
std::string Fingerprint(const LoaderSettings& settings);

// "seq_len is 32 in the state, 64 here; ..." for a state's "settings".
std::string SettingDifferences(const LoaderSettings& here, const std::vector<StateSetting>& saved);

// OK when `state` was saved with these settings (same fingerprint); else
// InvalidArgument naming the settings that differ (or, for a state without
// "settings", both fingerprints) and those that must be the same.
Status CheckSameSettings(const LoaderState& state, const LoaderSettings& here);

}  // namespace tokenfeed::loader
