// Seen, SeenContains and FindRecordsOfLine (include/tokenfeed/seen.h). The
// loader's own streams (a StepReplayer holding every shard) say which
// blocks each saved position has passed and which records its current
// window visits first; nothing here computes the order again.
#include "tokenfeed/seen.h"

#include <algorithm>
#include <chrono>
#include <tuple>

#include "loader/loader_state.h"
#include "loader/step_replayer.h"
#include "tokenfeed/record.h"
#include "tokenfeed/replay.h"
#include "tokenfeed/topic.h"

namespace tokenfeed {
namespace {

using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;

void Merge(Ranges* r) {
  std::sort(r->begin(), r->end());
  Ranges out;
  for (const auto& [a, b] : *r) {
    if (a >= b) continue;
    if (!out.empty() && a <= out.back().second) {
      out.back().second = std::max(out.back().second, b);
    } else {
      out.emplace_back(a, b);
    }
  }
  *r = std::move(out);
}

Result<LoaderOptions> OptionsForStreams(const std::string& state_json, const SeenOptions& options) {
  TF_ASSIGN_OR_RETURN(LoaderOptions o, LoaderOptionsFromState(state_json));
  // One reader holding every shard; the step shape plays no part here.
  o.rank = 0;
  o.world_size = 1;
  o.batch_size = 1;
  o.prefetch_batches = 1;
  o.kafka_properties = options.kafka_properties;
  o.kafka_timeout_ms = options.kafka_timeout_ms;
  return o;
}

}  // namespace

const char* SeenAnswerName(SeenAnswer a) {
  switch (a) {
    case SeenAnswer::kYes:
      return "yes";
    case SeenAnswer::kPartly:
      return "partly";
    case SeenAnswer::kNo:
      break;
  }
  return "no";
}

Result<SeenReport> Seen(const std::string& state_json, const SeenOptions& options) {
  TF_ASSIGN_OR_RETURN(loader::LoaderState state, loader::ParseLoaderState(state_json));
  TF_ASSIGN_OR_RETURN(LoaderOptions o, OptionsForStreams(state_json, options));
  const bool sharded = state.shard_count > 1;
  if (sharded && state.shards.size() != state.shard_count) {
    return Status::InvalidArgument("the loader state holds " + std::to_string(state.shards.size()) + " of its " +
                                   std::to_string(state.shard_count) +
                                   " shards (one rank's): merge the states of all ranks saved at the same step "
                                   "(tokenfeed.merge_states / MergeLoaderStates) to see what the run consumed");
  }
  TF_ASSIGN_OR_RETURN(auto replayer, loader::OpenStepReplayer(o));
  // Loading checks the state against the settings read from it.
  TF_RETURN_IF_ERROR(replayer->Load(state_json));
  SeenReport report;
  report.samples = state.samples;
  if (state.run) {
    const uint64_t per_step = uint64_t{state.run->batch_size} * state.run->world_size;
    if (per_step > 0 && state.samples % per_step == 0) report.step = state.samples / per_step;
  }
  // Each stream's saved position, by shard.
  struct Saved {
    uint32_t shard;
    const std::vector<uint64_t>* mixer;
    const std::vector<loader::SourcePosition>* positions;
  };
  std::vector<Saved> saved;
  if (sharded) {
    for (const loader::ShardState& part : state.shards) saved.push_back({part.shard, &part.mixer, &part.positions});
  } else {
    saved.push_back({0, &state.mixer, &state.positions});
  }
  const uint32_t ends = (o.bos_id ? 1 : 0) + (o.eos_id ? 1 : 0);
  for (uint32_t s = 0; s < o.sources.size(); ++s) {
    SeenSource out;
    out.uri = o.sources[s].uri;
    const auto& partitions = state.snapshot.sources[s].partitions;
    out.whole.resize(partitions.size());
    for (const Saved& part : saved) {
      if (s >= part.positions->size() || s >= part.mixer->size()) {
        return Status::InvalidArgument("the loader state has another number of sources");
      }
      out.samples += (*part.mixer)[s];
      const loader::SourcePosition& p = (*part.positions)[s];
      loader::SourceStream* stream = replayer->Stream(part.shard, s);
      if (stream == nullptr) return Status::Internal("no stream for shard " + std::to_string(part.shard));
      // A pass completed: every record was consumed whole.
      if (stream->windows_per_epoch() != UINT64_MAX && p.epoch > 0) out.all = true;
      if (out.all) continue;
      // A shard with windows within passes (a finite sharded run): every
      // window of its passes before the position's.
      if (stream->config().pass_windows) {
        for (uint64_t e = 0; e < p.epoch; ++e) {
          for (uint64_t w = 0; w < stream->WindowsIn(e); ++w) {
            for (const loader::Block& b : stream->WindowBlocks(e, w)) {
              out.whole[b.partition].emplace_back(b.offset, b.offset + b.count);
            }
          }
        }
      }
      // The windows passed in the position's epoch (an endless shard's or a
      // followed stream's windows are one sequence, numbered in epoch 0).
      for (uint64_t w = 0; w < p.window; ++w) {
        for (const loader::Block& b : stream->WindowBlocks(p.epoch, w)) {
          out.whole[b.partition].emplace_back(b.offset, b.offset + b.count);
        }
      }
      if (p.doc == 0 && p.token == 0) continue;
      TF_ASSIGN_OR_RETURN(auto visited, stream->WindowVisitOrder(p.epoch, p.window));
      for (uint32_t d = 0; d < std::min<size_t>(p.doc, visited.size()); ++d) {
        out.whole[visited[d].partition].emplace_back(visited[d].offset, visited[d].offset + 1);
      }
      if (p.token > 0 && p.doc < visited.size()) {
        const auto& key = visited[p.doc];
        out.partial.push_back({key.partition, key.offset, p.token, key.stored + ends});
      }
    }
    if (out.all) {
      out.partial.clear();
      for (size_t q = 0; q < partitions.size(); ++q) out.whole[q] = {{partitions[q].start, partitions[q].end}};
    }
    bool covers_all = !o.follow;
    for (size_t q = 0; q < partitions.size(); ++q) {
      Merge(&out.whole[q]);
      for (const auto& [a, b] : out.whole[q]) out.whole_offsets += b - a;
      const bool empty = partitions[q].end <= partitions[q].start;
      covers_all = covers_all && (empty || (out.whole[q].size() == 1 && out.whole[q][0].first <= partitions[q].start &&
                                            out.whole[q][0].second >= partitions[q].end));
    }
    if (covers_all) {  // e.g. shards that between them passed every block
      out.all = true;
      out.partial.clear();
    }
    if (o.pack) out.tokens = out.samples * o.seq_len;
    report.sources.push_back(std::move(out));
  }
  return report;
}

SeenAnswer SeenContains(const SeenReport& report, const std::string& uri, uint32_t partition, uint64_t offset) {
  SeenAnswer answer = SeenAnswer::kNo;
  for (const SeenSource& s : report.sources) {
    if (s.uri != uri) continue;
    if (partition < s.whole.size()) {
      const auto& r = s.whole[partition];
      auto it = std::upper_bound(r.begin(), r.end(), std::make_pair(offset, UINT64_MAX));
      if (it != r.begin() && offset >= std::prev(it)->first && offset < std::prev(it)->second) return SeenAnswer::kYes;
    }
    for (const SeenPartial& p : s.partial) {
      if (p.partition == partition && p.offset == offset) answer = SeenAnswer::kPartly;
    }
  }
  return answer;
}

Result<std::vector<SeenRecordRef>> FindRecordsOfLine(const std::string& state_json, const std::string& path,
                                                     uint64_t line, const SeenOptions& options) {
  TF_ASSIGN_OR_RETURN(loader::LoaderState state, loader::ParseLoaderState(state_json));
  topic::TopicConfig config;
  config.kafka_properties = options.kafka_properties;
  config.kafka_timeout = std::chrono::milliseconds(options.kafka_timeout_ms);
  const auto wait = std::chrono::milliseconds(options.kafka_timeout_ms);
  const auto target = std::make_tuple(std::string_view(path), line);
  std::vector<SeenRecordRef> found;
  for (uint32_t s = 0; s < state.snapshot.sources.size(); ++s) {
    const loader::SnapshotSource& src = state.snapshot.sources[s];
    for (uint32_t q = 0; q < src.partitions.size(); ++q) {
      uint64_t lo = src.partitions[q].start, hi = src.partitions[q].end;
      if (lo >= hi) continue;
      TF_ASSIGN_OR_RETURN(auto cursor, topic::OpenPartitionCursor(src.uri, PartitionId(q), config));
      // The records of a partition are in the ingest's input order: the
      // first one at or after `target` is found in log2(records) reads.
      while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        TF_RETURN_IF_ERROR(cursor->Seek(Offset(mid)));
        TF_ASSIGN_OR_RETURN(auto records, cursor->Read(wait, 1, Offset(hi)));
        if (records.empty()) {  // no record in [mid, hi): markers only
          hi = mid;
          continue;
        }
        const uint64_t at = records[0].offset.value();
        auto view = record::RecordView::Parse(records[0].bytes);
        if (!view.ok()) {
          return view.status().WithContext(src.uri + " partition " + std::to_string(q) + " offset " +
                                           std::to_string(at));
        }
        const auto key = std::make_tuple(view->source_path(), view->source_line());
        if (key == target) {
          found.push_back({s, q, at});
          break;
        }
        if (key < target) {
          lo = at + 1;
        } else {
          hi = mid;
        }
      }
    }
  }
  return found;
}

}  // namespace tokenfeed
