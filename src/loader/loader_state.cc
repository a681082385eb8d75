#include "loader/loader_state.h"

#include <cstdio>
#include <map>
#include <utility>

#include <simdjson.h>

#include "base/json_writer.h"

namespace tokenfeed::loader {
namespace {

// The project's one JSON writer quotes (escapes, and keeps the text valid
// UTF-8 so that the state always parses again).
void AppendJsonString(std::string_view text, std::string* j) { JsonWriter(j).String(text); }

void AppendSnapshotJson(const Snapshot& snapshot, std::string* j) {
  *j += "[";
  for (size_t s = 0; s < snapshot.sources.size(); ++s) {
    const SnapshotSource& src = snapshot.sources[s];
    if (s) *j += ",";
    *j += "{\"uri\":";
    AppendJsonString(src.uri, j);
    *j += ",\"partitions\":[";
    for (size_t p = 0; p < src.partitions.size(); ++p) {
      if (p) *j += ",";
      *j += "[" + std::to_string(src.partitions[p].start) + "," + std::to_string(src.partitions[p].end) + "]";
    }
    *j += "]}";
  }
  *j += "]";
}

Result<Snapshot> ParseSnapshotElement(simdjson::dom::element e) {
  simdjson::dom::array arr;
  if (e.get(arr)) {
    return Status::InvalidArgument("the snapshot is not a list of sources (one {\"uri\", \"partitions\"} each)");
  }
  Snapshot snap;
  size_t s = 0;
  for (simdjson::dom::element src : arr) {
    std::string_view uri;
    simdjson::dom::array parts;
    if (src["uri"].get(uri) || src["partitions"].get(parts)) {
      return Status::InvalidArgument("malformed snapshot entry " + std::to_string(s));
    }
    SnapshotSource source{std::string(uri), {}};
    for (simdjson::dom::element p : parts) {
      simdjson::dom::array pair;
      uint64_t a, b;
      if (p.get(pair) || pair.size() != 2 || pair.at(0).get(a) || pair.at(1).get(b) || b < a) {
        return Status::InvalidArgument("malformed partition range in the snapshot of " + source.uri);
      }
      source.partitions.push_back({a, b});
    }
    snap.sources.push_back(std::move(source));
    ++s;
  }
  return snap;
}

Status ParseCounts(simdjson::dom::array counts, std::vector<uint64_t>* out) {
  for (simdjson::dom::element c : counts) {
    uint64_t v;
    if (c.get(v)) return Status::InvalidArgument("malformed mixer counts in the loader state");
    out->push_back(v);
  }
  return Status::OK();
}

Status ParsePositions(simdjson::dom::array sources, std::vector<SourcePosition>* out) {
  for (simdjson::dom::element src : sources) {
    uint64_t epoch, window, doc, token;
    if (src["epoch"].get(epoch) || src["window"].get(window) || src["doc"].get(doc) || src["token"].get(token) ||
        doc > UINT32_MAX || token > UINT32_MAX) {
      return Status::InvalidArgument("malformed source position in the loader state");
    }
    out->push_back({epoch, window, static_cast<uint32_t>(doc), static_cast<uint32_t>(token)});
  }
  return Status::OK();
}

// [[{"epoch":E,"tokens":T,"documents":D},...],...]: per source, per epoch.
Status ParseTallies(simdjson::dom::array sources, SourceTallies* out) {
  for (simdjson::dom::element src : sources) {
    simdjson::dom::array epochs;
    if (src.get(epochs)) return Status::InvalidArgument("malformed consumed counts in the loader state");
    std::vector<EpochTally>& tallies = out->emplace_back();
    for (simdjson::dom::element e : epochs) {
      EpochTally t;
      if (e["epoch"].get(t.epoch) || e["tokens"].get(t.tokens) || e["documents"].get(t.documents) ||
          (!tallies.empty() && tallies.back().epoch >= t.epoch)) {
        return Status::InvalidArgument("malformed consumed counts in the loader state: each source's epochs must "
                                       "be {\"epoch\", \"tokens\", \"documents\"} in increasing order");
      }
      tallies.push_back(t);
    }
  }
  return Status::OK();
}

void AppendTallies(const SourceTallies& tallies, std::string* j) {
  *j += "[";
  for (size_t s = 0; s < tallies.size(); ++s) {
    *j += s ? ",[" : "[";
    for (size_t e = 0; e < tallies[s].size(); ++e) {
      const EpochTally& t = tallies[s][e];
      *j += std::string(e ? "," : "") + "{\"epoch\":" + std::to_string(t.epoch) + ",\"tokens\":" +
            std::to_string(t.tokens) + ",\"documents\":" + std::to_string(t.documents) + "}";
    }
    *j += "]";
  }
  *j += "]";
}

void AppendCounts(const std::vector<uint64_t>& counts, std::string* j) {
  *j += "[";
  for (size_t s = 0; s < counts.size(); ++s) *j += (s ? "," : "") + std::to_string(counts[s]);
  *j += "]";
}

void AppendPositions(const std::vector<SourcePosition>& positions, std::string* j) {
  *j += "[";
  for (size_t s = 0; s < positions.size(); ++s) {
    const SourcePosition& p = positions[s];
    *j += std::string(s ? "," : "") + "{\"epoch\":" + std::to_string(p.epoch) + ",\"window\":" +
          std::to_string(p.window) + ",\"doc\":" + std::to_string(p.doc) + ",\"token\":" + std::to_string(p.token) +
          "}";
  }
  *j += "]";
}

}  // namespace

Result<Snapshot> ParseSnapshot(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::element e;
  if (parser.parse(json.data(), json.size()).get(e)) return Status::InvalidArgument("the snapshot is not valid JSON");
  return ParseSnapshotElement(e);
}

std::string SnapshotJson(const Snapshot& snapshot) {
  std::string j;
  AppendSnapshotJson(snapshot, &j);
  return j;
}

Result<LoaderState> ParseLoaderState(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(json.data(), json.size()).get(root)) {
    return Status::InvalidArgument("the loader state is not valid JSON");
  }
  int64_t version;
  std::string_view fingerprint;
  LoaderState state;
  simdjson::dom::element snap_el;
  simdjson::dom::array mixer, sources;
  if (root["version"].get(version) || root["fingerprint"].get(fingerprint) || root["samples"].get(state.samples) ||
      root["snapshot"].get(snap_el) || root["mixer"].get(mixer) || root["sources"].get(sources)) {
    return Status::InvalidArgument("the loader state lacks version, fingerprint, samples, snapshot, mixer or "
                                   "sources: it is not a tokenfeed loader state");
  }
  if (version != kLoaderStateVersion) {
    return Status::Unsupported("loader state version " + std::to_string(version) + "; this build reads " +
                               std::to_string(kLoaderStateVersion));
  }
  state.fingerprint = std::string(fingerprint);
  TF_ASSIGN_OR_RETURN(state.snapshot, ParseSnapshotElement(snap_el));
  TF_RETURN_IF_ERROR(ParseCounts(mixer, &state.mixer));
  TF_RETURN_IF_ERROR(ParsePositions(sources, &state.positions));
  // Absent in an unsharded state.
  if (root["shard_count"].error() != simdjson::NO_SUCH_FIELD) {
    uint64_t count;
    simdjson::dom::array shards;
    // Written only for a sharded state: a count of at least 2.
    if (root["shard_count"].get(count) || count < 2 || count > UINT32_MAX || root["shards"].get(shards)) {
      return Status::InvalidArgument("malformed shard_count or shards in the loader state");
    }
    state.shard_count = static_cast<uint32_t>(count);
    for (simdjson::dom::element sh : shards) {
      uint64_t number;
      simdjson::dom::array shard_mixer, shard_sources;
      if (sh["shard"].get(number) || number >= count || sh["mixer"].get(shard_mixer) ||
          sh["sources"].get(shard_sources)) {
        return Status::InvalidArgument("malformed shard in the loader state");
      }
      ShardState part;
      part.shard = static_cast<uint32_t>(number);
      TF_RETURN_IF_ERROR(ParseCounts(shard_mixer, &part.mixer));
      TF_RETURN_IF_ERROR(ParsePositions(shard_sources, &part.positions));
      if (sh["consumed"].error() != simdjson::NO_SUCH_FIELD) {
        simdjson::dom::array consumed;
        if (sh["consumed"].get(consumed)) return Status::InvalidArgument("malformed shard consumed counts");
        TF_RETURN_IF_ERROR(ParseTallies(consumed, &part.consumed));
      }
      if (!state.shards.empty() && state.shards.back().shard >= part.shard) {
        return Status::InvalidArgument("the loader state's shards are not listed once each, in order");
      }
      state.shards.push_back(std::move(part));
    }
  }
  // Absent in a state of the first round.
  if (root["epoch_base"].error() != simdjson::NO_SUCH_FIELD && root["epoch_base"].get(state.epoch_base)) {
    return Status::InvalidArgument("malformed epoch_base in the loader state");
  }
  // Absent in a state written before token accounting: counting starts here.
  state.consumed_from = state.samples;
  if (root["consumed"].error() != simdjson::NO_SUCH_FIELD) {
    simdjson::dom::element consumed;
    int64_t consumed_version;
    if (root["consumed"].get(consumed) || consumed["version"].get(consumed_version) ||
        consumed["from_sample"].get(state.consumed_from) ||
        state.consumed_from > state.samples) {
      return Status::InvalidArgument("malformed consumed member in the loader state (version, from_sample)");
    }
    if (consumed_version != kConsumedVersion) {
      return Status::Unsupported("the loader state's consumed counts are of version " +
                                 std::to_string(consumed_version) + "; this build reads " +
                                 std::to_string(kConsumedVersion));
    }
    if (consumed["sources"].error() != simdjson::NO_SUCH_FIELD) {
      simdjson::dom::array sources_consumed;
      if (consumed["sources"].get(sources_consumed)) {
        return Status::InvalidArgument("malformed consumed sources in the loader state");
      }
      TF_RETURN_IF_ERROR(ParseTallies(sources_consumed, &state.consumed));
    }
  }
  // Absent in a state written before replay needed it.
  if (root["run"].error() != simdjson::NO_SUCH_FIELD) {
    simdjson::dom::object run;
    simdjson::dom::array weights;
    uint64_t batch_size, world_size;
    if (root["run"].get(run) || run["batch_size"].get(batch_size) || run["world_size"].get(world_size) ||
        run["weights"].get(weights) || batch_size == 0 || batch_size > UINT32_MAX || world_size == 0 ||
        world_size > UINT32_MAX) {
      return Status::InvalidArgument("malformed run (batch_size, world_size, weights) in the loader state");
    }
    RunShape shape{static_cast<uint32_t>(batch_size), static_cast<uint32_t>(world_size), {}};
    for (simdjson::dom::element w : weights) {
      double v;
      if (w.get(v) || !(v >= 0)) return Status::InvalidArgument("malformed run weights in the loader state");
      shape.weights.push_back(v);
    }
    state.run = std::move(shape);
  }
  simdjson::dom::object settings;
  if (!root["settings"].get(settings)) {
    state.settings.emplace();
    for (simdjson::dom::key_value_pair field : settings) {
      StateSetting setting{std::string(field.key), std::nullopt};
      std::string_view value;
      if (!field.value.get(value)) setting.value = std::string(value);
      state.settings->push_back(std::move(setting));
    }
  }
  return state;
}

std::string LoaderStateJson(const LoaderState& state) {
  std::string j = "{\"version\":" + std::to_string(kLoaderStateVersion) + ",\"fingerprint\":";
  AppendJsonString(state.fingerprint, &j);
  j += ",\"samples\":" + std::to_string(state.samples) + ",\"mixer\":";
  AppendCounts(state.mixer, &j);
  j += ",\"sources\":";
  AppendPositions(state.positions, &j);
  j += ",\"epoch_base\":" + std::to_string(state.epoch_base);
  if (state.shard_count > 1) {
    j += ",\"shard_count\":" + std::to_string(state.shard_count) + ",\"shards\":[";
    for (size_t i = 0; i < state.shards.size(); ++i) {
      const ShardState& part = state.shards[i];
      j += std::string(i ? "," : "") + "{\"shard\":" + std::to_string(part.shard) + ",\"mixer\":";
      AppendCounts(part.mixer, &j);
      j += ",\"sources\":";
      AppendPositions(part.positions, &j);
      if (!part.consumed.empty()) {
        j += ",\"consumed\":";
        AppendTallies(part.consumed, &j);
      }
      j += "}";
    }
    j += "]";
  }
  // Written whenever counted: unsharded with the counts, sharded with the
  // start only (the counts are in the shards).
  // (A state that has no counts and counts from its own sample is written
  // without the member: it reads back the same.)
  bool counted = !state.consumed.empty() || state.consumed_from != state.samples;
  for (const ShardState& part : state.shards) counted = counted || !part.consumed.empty();
  if (counted) {
    j += ",\"consumed\":{\"version\":" + std::to_string(kConsumedVersion) + ",\"from_sample\":" +
         std::to_string(state.consumed_from);
    if (!state.consumed.empty()) {
      j += ",\"sources\":";
      AppendTallies(state.consumed, &j);
    }
    j += "}";
  }
  if (state.settings) {
    j += ",\"settings\":{";
    for (size_t i = 0; i < state.settings->size(); ++i) {
      const StateSetting& setting = (*state.settings)[i];
      if (i) j += ",";
      AppendJsonString(setting.name, &j);
      j += ":";
      if (setting.value) {
        AppendJsonString(*setting.value, &j);
      } else {
        j += "null";
      }
    }
    j += "}";
  }
  if (state.run) {
    j += ",\"run\":{\"batch_size\":" + std::to_string(state.run->batch_size) +
         ",\"world_size\":" + std::to_string(state.run->world_size) + ",\"weights\":[";
    for (size_t s = 0; s < state.run->weights.size(); ++s) {
      char w[32];
      std::snprintf(w, sizeof(w), "%.17g", state.run->weights[s]);  // read back to the same double
      j += std::string(s ? "," : "") + w;
    }
    j += "]}";
  }
  j += ",\"snapshot\":";
  AppendSnapshotJson(state.snapshot, &j);
  return j + "}";
}

Result<LoaderState> MergeLoaderStates(const std::vector<LoaderState>& states) {
  if (states.empty()) return Status::InvalidArgument("no loader state to merge");
  const LoaderState& first = states[0];
  if (first.shard_count <= 1) {
    return Status::InvalidArgument("the loader states are not sharded (shards=1): each already holds the whole "
                                   "stream; load any one of them");
  }
  std::map<uint32_t, const ShardState*> by_shard;
  for (size_t i = 0; i < states.size(); ++i) {
    const LoaderState& s = states[i];
    if (s.fingerprint != first.fingerprint || s.shard_count != first.shard_count || s.snapshot != first.snapshot ||
        s.consumed_from != first.consumed_from) {
      return Status::InvalidArgument("loader state " + std::to_string(i) +
                                     " is of another run than state 0 (its settings, shards or snapshot differ)");
    }
    if (s.samples != first.samples) {
      return Status::InvalidArgument("loader state " + std::to_string(i) + " is at global sample " +
                                     std::to_string(s.samples) + ", state 0 at " + std::to_string(first.samples) +
                                     ": merge the states every rank saved at the same step");
    }
    for (const ShardState& part : s.shards) {
      auto [it, inserted] = by_shard.emplace(part.shard, &part);
      if (!inserted && !(*it->second == part)) {
        return Status::InvalidArgument("shard " + std::to_string(part.shard) +
                                       " differs between the loader states: they are not of one step");
      }
    }
  }
  LoaderState merged = first;
  merged.shards.clear();
  for (uint32_t shard = 0; shard < first.shard_count; ++shard) {
    auto it = by_shard.find(shard);
    if (it == by_shard.end()) {
      return Status::InvalidArgument("no loader state holds shard " + std::to_string(shard) + " of " +
                                     std::to_string(first.shard_count) + ": merge the states of all ranks");
    }
    merged.shards.push_back(*it->second);
  }
  return merged;
}

}  // namespace tokenfeed::loader
