// ReplayStep and LoaderOptionsFromState (include/tokenfeed/replay.h): the
// step is produced by the loader's own pipeline (StepReplayer,
// step_replayer.h) from the state's position or the run's start; the
// pieces it notes are then named by reading each record's source fields.
#include "tokenfeed/replay.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <map>
#include <memory>
#include <tuple>
#include <utility>

#include "loader/loader_state.h"
#include "loader/step_replayer.h"
#include "tokenfeed/record.h"
#include "tokenfeed/topic.h"

namespace tokenfeed {
namespace {

template <typename T>
bool ParseNumber(const std::string& text, T* out) {
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && p == end;
}

Status BadSetting(const std::string& name, const std::string& value) {
  return Status::InvalidArgument("the loader state's setting " + name + " is '" + value +
                                 "', which this build cannot read");
}

// The state with every stream at the run's start: global sample 0, every
// source (of every shard) at epoch 0, nothing drawn.
std::string StartOfRun(loader::LoaderState state) {
  state.samples = 0;
  state.epoch_base = 0;
  for (auto& c : state.mixer) c = 0;
  for (auto& p : state.positions) p = {};
  if (state.shard_count > 1) {
    const size_t sources = state.snapshot.sources.size();
    state.shards.clear();
    for (uint32_t s = 0; s < state.shard_count; ++s) {
      state.shards.push_back({s, std::vector<uint64_t>(sources, 0), std::vector<loader::SourcePosition>(sources)});
    }
  }
  return loader::LoaderStateJson(state);
}

// Reads each piece's record once more for its source fields.
class RecordNamer {
 public:
  RecordNamer(const LoaderOptions& o) : o_(o) {
    config_.kafka_properties = o.kafka_properties;
    config_.kafka_timeout = std::chrono::milliseconds(o.kafka_timeout_ms);
    // One record at a time, each after a seek: on Kafka, short broker-side
    // fetch waits (a seek's fetch would otherwise wait up to 100 ms).
    config_.read_pattern = topic::ReadPattern::kBlocks;
  }

  Status Name(ReplayPiece* piece) {
    const auto key = std::make_pair(piece->source, piece->partition);
    auto it = cursors_.find(key);
    if (it == cursors_.end()) {
      TF_ASSIGN_OR_RETURN(auto cursor,
                          topic::OpenPartitionCursor(o_.sources[piece->source].uri, PartitionId(piece->partition),
                                                     config_));
      it = cursors_.emplace(key, std::move(cursor)).first;
    }
    topic::PartitionCursor& cursor = *it->second;
    const std::string where = piece->uri + " partition " + std::to_string(piece->partition) + " offset " +
                              std::to_string(piece->offset);
    TF_RETURN_IF_ERROR(cursor.Seek(Offset(piece->offset)));
    TF_ASSIGN_OR_RETURN(auto records,
                        cursor.Read(std::chrono::milliseconds(o_.kafka_timeout_ms), 1, Offset(piece->offset + 1)));
    if (records.empty() || records[0].offset != Offset(piece->offset)) {
      return Status::NotFound("no record at " + where + " any more");
    }
    auto view = record::RecordView::Parse(records[0].bytes);
    if (!view.ok()) return view.status().WithContext(where);
    if (view->ids().size() != piece->stored) {
      return Status::Corruption(where + " holds " + std::to_string(view->ids().size()) + " ids, the replayed " +
                                std::to_string(piece->stored));
    }
    piece->source_kind = view->source_kind() == record::SourceKind::kFile ? "file" : "message";
    piece->source_path = std::string(view->source_path());
    piece->source_line = view->source_line();
    piece->source_byte_offset = view->source_byte_offset();
    return Status::OK();
  }

 private:
  const LoaderOptions& o_;
  topic::TopicConfig config_;
  std::map<std::pair<uint32_t, uint32_t>, std::unique_ptr<topic::PartitionCursor>> cursors_;
};

}  // namespace

Result<LoaderOptions> LoaderOptionsFromState(const std::string& state_json) {
  TF_ASSIGN_OR_RETURN(loader::LoaderState state, loader::ParseLoaderState(state_json));
  if (!state.settings) {
    return Status::InvalidArgument("the loader state carries no settings (it was written by an early version): "
                                   "it can be resumed, but not replayed");
  }
  LoaderOptions o;
  std::map<std::string, std::string> named;
  std::vector<std::pair<std::string, double>> sources;
  for (const loader::StateSetting& s : *state.settings) {
    if (!s.value) return BadSetting(s.name, "null");
    if (s.name.starts_with("source ")) {
      const size_t at = s.value->rfind('@');
      double proportion = 0;
      if (at == std::string::npos || !ParseNumber(s.value->substr(at + 1), &proportion)) {
        return BadSetting(s.name, *s.value);
      }
      sources.emplace_back(s.value->substr(0, at), proportion);
    } else {
      named.emplace(s.name, *s.value);
    }
  }
  auto number = [&](const char* name, auto* out, bool required = true) -> Status {
    auto it = named.find(name);
    if (it == named.end()) {
      return required ? Status::InvalidArgument(std::string("the loader state's settings lack ") + name)
                      : Status::OK();
    }
    return ParseNumber(it->second, out) ? Status::OK() : BadSetting(name, it->second);
  };
  auto flag = [&](const char* name, bool* out, bool required = true) -> Status {
    uint32_t v = 0;
    TF_RETURN_IF_ERROR(number(name, &v, required));
    if (named.count(name)) *out = v != 0;
    return Status::OK();
  };
  auto id = [&](const char* name, std::optional<uint32_t>* out) -> Status {
    auto it = named.find(name);
    if (it == named.end()) return Status::InvalidArgument(std::string("the loader state's settings lack ") + name);
    if (it->second == "-") return Status::OK();
    uint32_t v;
    if (!ParseNumber(it->second, &v)) return BadSetting(name, it->second);
    *out = v;
    return Status::OK();
  };
  TF_RETURN_IF_ERROR(number("seq_len", &o.seq_len));
  TF_RETURN_IF_ERROR(number("seed", &o.seed));
  TF_RETURN_IF_ERROR(flag("shuffle", &o.shuffle));
  // One number when every source has it; a list means the transports'
  // defaults (the fingerprint check says if not).
  if (auto it = named.find("block_records"); it != named.end() && it->second.find(',') == std::string::npos) {
    TF_RETURN_IF_ERROR(number("block_records", &o.block_records));
  }
  TF_RETURN_IF_ERROR(number("window_blocks", &o.window_blocks));
  TF_RETURN_IF_ERROR(number("epochs", &o.epochs));
  TF_RETURN_IF_ERROR(flag("pack", &o.pack));
  TF_RETURN_IF_ERROR(id("bos_id", &o.bos_id));
  TF_RETURN_IF_ERROR(id("eos_id", &o.eos_id));
  TF_RETURN_IF_ERROR(number("pad_id", &o.pad_id));
  TF_RETURN_IF_ERROR(flag("cross_document_labels", &o.cross_document_labels));
  TF_RETURN_IF_ERROR(number("ignore_index", &o.ignore_index));
  TF_RETURN_IF_ERROR(number("shards", &o.shards, /*required=*/false));
  TF_RETURN_IF_ERROR(flag("follow", &o.follow, /*required=*/false));
  if (o.follow) o.epochs = 0;
  if (sources.size() != state.snapshot.sources.size()) {
    return Status::InvalidArgument("the loader state names " + std::to_string(sources.size()) +
                                   " sources in its settings and " + std::to_string(state.snapshot.sources.size()) +
                                   " in its snapshot");
  }
  for (size_t s = 0; s < sources.size(); ++s) {
    double weight = sources[s].second;
    if (state.run && state.run->weights.size() == sources.size()) weight = state.run->weights[s];
    o.sources.push_back({sources[s].first, weight});
  }
  if (state.run) {
    o.batch_size = state.run->batch_size;
    o.world_size = state.run->world_size;
  }
  o.snapshot_json = loader::SnapshotJson(state.snapshot);
  return o;
}

Result<ReplayedStep> ReplayStep(const std::string& state_json, uint64_t step, const ReplayOptions& options) {
  TF_ASSIGN_OR_RETURN(loader::LoaderState state, loader::ParseLoaderState(state_json));
  TF_ASSIGN_OR_RETURN(LoaderOptions o, LoaderOptionsFromState(state_json));
  if (!state.run && (!options.batch_size || !options.world_size)) {
    return Status::InvalidArgument("the loader state does not say the run's batch_size and world_size (it was "
                                   "written before states carried them): give both");
  }
  if (options.batch_size) o.batch_size = *options.batch_size;
  if (options.world_size) o.world_size = *options.world_size;
  o.kafka_properties = options.kafka_properties;
  o.kafka_timeout_ms = options.kafka_timeout_ms;
  o.prefetch_batches = 1;
  const uint32_t B = o.batch_size, W = o.world_size;
  if (options.rank && *options.rank >= W) {
    return Status::InvalidArgument("rank " + std::to_string(*options.rank) + " is not below the run's world_size " +
                                   std::to_string(W));
  }
  // One rank: the pipeline as that rank ran it. Every rank: one reader of
  // the whole global step (the stream does not depend on the world size).
  LoaderOptions run = o;
  if (options.rank) {
    run.rank = *options.rank;
  } else {
    run.rank = 0;
    run.world_size = 1;
    run.batch_size = B * W;
  }
  TF_RETURN_IF_ERROR(ValidateLoaderOptions(run));
  const uint64_t per_step = uint64_t{B} * W;
  // Where to start: the latest of the states (this one and the other
  // checkpoints given) at or before the step that holds the shards this
  // replay reads; else the run's start. Each carries the run's fingerprint
  // and snapshot, which loading checks against the settings read from it.
  std::string start = StartOfRun(state);
  uint64_t start_samples = 0;
  std::vector<const std::string*> candidates = {&state_json};
  for (const std::string& other : options.other_states) candidates.push_back(&other);
  for (size_t i = 0; i < candidates.size(); ++i) {
    auto parsed = loader::ParseLoaderState(*candidates[i]);
    if (!parsed.ok()) return parsed.status().WithContext("other state " + std::to_string(i - 1));
    if (parsed->fingerprint != state.fingerprint || parsed->snapshot != state.snapshot ||
        parsed->shard_count != state.shard_count) {
      return Status::InvalidArgument("other state " + std::to_string(i - 1) +
                                     " is of another run than the state (its settings or snapshot differ)");
    }
    if (parsed->samples % per_step != 0 || parsed->samples / per_step > step || parsed->samples < start_samples) {
      continue;
    }
    bool holds = true;  // every shard this replay reads
    for (uint32_t shard = 0; parsed->shard_count > 1 && shard < parsed->shard_count; ++shard) {
      if (run.world_size > 1 && shard % run.world_size != run.rank) continue;
      holds = holds && std::any_of(parsed->shards.begin(), parsed->shards.end(),
                                   [&](const loader::ShardState& part) { return part.shard == shard; });
    }
    if (!holds) continue;
    start = *candidates[i];
    start_samples = parsed->samples;
  }
  TF_ASSIGN_OR_RETURN(auto replayer, loader::OpenStepReplayer(run));
  TF_RETURN_IF_ERROR(replayer->Load(start));
  ReplayedStep out;
  out.step = step;
  out.batch_size = B;
  out.world_size = W;
  out.started_at_step = replayer->next_step();
  while (replayer->next_step() < step) {
    TF_ASSIGN_OR_RETURN(Batch skipped, replayer->Step(/*copy=*/false, nullptr));
    (void)skipped;
    ++out.steps_skipped;
  }
  std::vector<loader::RowPiece> pieces;
  TF_ASSIGN_OR_RETURN(Batch batch, replayer->Step(/*copy=*/true, &pieces));
  out.records_read = replayer->records_read();
  if (batch.step != step) {
    return Status::Internal("replay produced step " + std::to_string(batch.step) + ", not " + std::to_string(step));
  }
  const uint32_t T = batch.seq_len;
  const auto ids = batch.input_ids64();
  const auto labels = batch.labels64();
  std::vector<ReplayRow> rows(batch.batch_size);
  for (uint32_t i = 0; i < batch.batch_size; ++i) {
    ReplayRow& r = rows[i];
    r.step = step;
    if (options.rank) {
      r.rank = *options.rank;
      r.row = i;
    } else if (o.shards > 1) {  // sample j of the step is rank j % W's row j / W
      r.rank = i % W;
      r.row = i / W;
    } else {  // sample j is rank j / B's row j % B
      r.rank = i / B;
      r.row = i % B;
    }
    r.source = batch.source_of_row[i];
    r.input_ids.assign(ids.begin() + size_t{i} * T, ids.begin() + size_t{i + 1} * T);
    r.labels.assign(labels.begin() + size_t{i} * T, labels.begin() + size_t{i + 1} * T);
  }
  RecordNamer namer(run);
  const uint32_t bos = o.bos_id ? 1 : 0;
  for (const loader::RowPiece& p : pieces) {
    ReplayPiece piece;
    piece.source = p.source;
    piece.uri = o.sources[p.source].uri;
    piece.partition = p.partition;
    piece.offset = p.offset;
    piece.stored = p.stored;
    piece.token_start = std::clamp(p.from, bos, bos + p.stored) - bos;
    piece.token_end = std::clamp(p.to, bos, bos + p.stored) - bos;
    piece.bos = bos && p.from == 0;
    piece.eos = o.eos_id.has_value() && p.to == bos + p.stored + 1;
    TF_RETURN_IF_ERROR(namer.Name(&piece));
    rows[p.row].pieces.push_back(std::move(piece));
  }
  for (ReplayRow& r : rows) {
    uint32_t used = 0;
    for (const ReplayPiece& piece : r.pieces) used += piece.bos + (piece.token_end - piece.token_start) + piece.eos;
    r.padding = used < T ? T - used : 0;
  }
  // By rank, then row.
  std::stable_sort(rows.begin(), rows.end(), [](const ReplayRow& a, const ReplayRow& b) {
    return std::tie(a.rank, a.row) < std::tie(b.rank, b.row);
  });
  out.rows = std::move(rows);
  return out;
}

}  // namespace tokenfeed
