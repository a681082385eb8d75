#include "loader/loader_fingerprint.h"

#include <cstdio>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace tokenfeed::loader {
namespace {

// One number when all sources share it (the common case), else one per
// source.
std::string BlockRecordsKey(const std::vector<uint32_t>& block_records) {
  std::string all = std::to_string(block_records[0]);
  bool same = true;
  for (size_t s = 1; s < block_records.size(); ++s) {
    same = same && block_records[s] == block_records[0];
    all += "," + std::to_string(block_records[s]);
  }
  return same ? std::to_string(block_records[0]) : all;
}

}  // namespace

LoaderSettings SettingsOf(const LoaderOptions& o, const std::vector<uint32_t>& block_records) {
  auto flag = [](bool b) { return std::string(b ? "1" : "0"); };
  auto id = [](const std::optional<uint32_t>& v) { return v ? std::to_string(*v) : std::string("-"); };
  LoaderSettings s = {
      {"seq_len", std::to_string(o.seq_len)},
      {"seed", std::to_string(o.seed)},
      {"shuffle", flag(o.shuffle)},
      {"block_records", BlockRecordsKey(block_records)},
      {"window_blocks", std::to_string(o.window_blocks)},
      {"epochs", std::to_string(o.epochs)},
      {"pack", flag(o.pack)},
      {"bos_id", id(o.bos_id)},
      {"eos_id", id(o.eos_id)},
      {"pad_id", std::to_string(o.pad_id)},
      {"cross_document_labels", flag(o.cross_document_labels)},
      {"ignore_index", std::to_string(o.ignore_index)},
  };
  // Named only when sharded, so that an unsharded state of an earlier
  // version keeps its fingerprint.
  if (o.shards > 1) s.emplace_back("shards", std::to_string(o.shards));
  if (o.follow) s.emplace_back("follow", "1");
  double total = 0;
  for (const auto& src : o.sources) total += src.weight;
  for (size_t i = 0; i < o.sources.size(); ++i) {
    char w[32];
    std::snprintf(w, sizeof(w), "%.9g", o.sources[i].weight / total);
    s.emplace_back("source " + std::to_string(i), o.sources[i].uri + "@" + w);
  }
  return s;
}

std::string Fingerprint(const LoaderSettings& settings) {
  std::string s = "tokenfeed-loader-v1";
  for (const auto& [name, value] : settings) s += "|" + value;
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(XXH3_64bits(s.data(), s.size())));
  return hex;
}

std::string SettingDifferences(const LoaderSettings& here, const std::vector<StateSetting>& saved) {
  std::string out;
  auto add = [&](const std::string& text) { out += (out.empty() ? "" : "; ") + text; };
  size_t saved_sources = 0;
  for (const StateSetting& setting : saved) saved_sources += setting.name.starts_with("source ");
  size_t here_sources = 0;
  for (const auto& [name, value] : here) {
    const bool is_source = name.starts_with("source ");
    here_sources += is_source;
    // The first entry of that name counts, as in a JSON object lookup.
    const StateSetting* theirs = nullptr;
    for (const StateSetting& setting : saved) {
      if (setting.name == name) {
        theirs = &setting;
        break;
      }
    }
    if (theirs == nullptr || !theirs->value) {
      if (!is_source) add(name + " is not in the state, " + value + " here");
      continue;
    }
    if (*theirs->value == value) continue;
    if (is_source) {
      add(name + " is " + *theirs->value + " in the state, " + value + " here (URI@proportion)");
    } else {
      add(name + " is " + *theirs->value + " in the state, " + value + " here");
    }
  }
  if (saved_sources != here_sources) {
    add(std::to_string(saved_sources) + " sources in the state, " + std::to_string(here_sources) + " here");
  }
  return out;
}

Status CheckSameSettings(const LoaderState& state, const LoaderSettings& here) {
  const std::string fingerprint = Fingerprint(here);
  if (state.fingerprint == fingerprint) return Status::OK();
  const std::string differences = state.settings ? SettingDifferences(here, *state.settings) : "";
  return Status::InvalidArgument(
      "the loader state was saved with other sources or settings" +
      (differences.empty() ? " (fingerprint " + state.fingerprint + ", this loader's " + fingerprint + ")"
                           : ": " + differences) +
      ". To resume, these must be the same: " + kCheckedSettings + "; world_size and batch_size may change");
}

}  // namespace tokenfeed::loader
