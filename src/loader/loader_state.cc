#include "loader/loader_state.h"

#include <cstdio>
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
  for (simdjson::dom::element c : mixer) {
    uint64_t v;
    if (c.get(v)) return Status::InvalidArgument("malformed mixer counts in the loader state");
    state.mixer.push_back(v);
  }
  for (simdjson::dom::element src : sources) {
    uint64_t epoch, window, doc, token;
    if (src["epoch"].get(epoch) || src["window"].get(window) || src["doc"].get(doc) || src["token"].get(token) ||
        doc > UINT32_MAX || token > UINT32_MAX) {
      return Status::InvalidArgument("malformed source position in the loader state");
    }
    state.positions.push_back({epoch, window, static_cast<uint32_t>(doc), static_cast<uint32_t>(token)});
  }
  // Absent in a state of the first round.
  if (root["epoch_base"].error() != simdjson::NO_SUCH_FIELD && root["epoch_base"].get(state.epoch_base)) {
    return Status::InvalidArgument("malformed epoch_base in the loader state");
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
  j += ",\"samples\":" + std::to_string(state.samples) + ",\"mixer\":[";
  for (size_t s = 0; s < state.mixer.size(); ++s) j += (s ? "," : "") + std::to_string(state.mixer[s]);
  j += "],\"sources\":[";
  for (size_t s = 0; s < state.positions.size(); ++s) {
    const SourcePosition& p = state.positions[s];
    j += std::string(s ? "," : "") + "{\"epoch\":" + std::to_string(p.epoch) + ",\"window\":" +
         std::to_string(p.window) + ",\"doc\":" + std::to_string(p.doc) + ",\"token\":" + std::to_string(p.token) +
         "}";
  }
  j += "],\"epoch_base\":" + std::to_string(state.epoch_base);
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
  j += ",\"snapshot\":";
  AppendSnapshotJson(state.snapshot, &j);
  return j + "}";
}

}  // namespace tokenfeed::loader
