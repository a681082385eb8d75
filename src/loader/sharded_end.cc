#include "loader/sharded_end.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "loader/pass_deal.h"
#include "loader/source_mixer.h"

namespace tokenfeed::loader {
namespace {

constexpr uint64_t kMaxDraws = uint64_t{1} << 34;

// Per shard: the samples source `source` owes, i.e. those that hold the
// blocks the passes deal the shard.
std::vector<uint64_t> SamplesOwed(const ShardedEndInput& in, uint32_t source) {
  const SourceBlockLengths& src = in.sources[source];
  const std::vector<uint64_t> weights = DealWeights(in, source);
  std::vector<uint64_t> laid(in.shards, 0);  // the deal's totals are what each shard lays
  for (uint64_t epoch = 0; epoch < in.passes && !src.blocks.empty(); ++epoch) {
    DealPass(EpochBlockOrder(src.blocks, in.shuffle, in.seed, source, epoch), weights, &laid);
  }
  if (in.pack) {
    for (uint64_t& l : laid) l = (l + in.seq_len - 1) / in.seq_len;
  }
  return laid;
}

}  // namespace

std::vector<uint64_t> DealWeights(const ShardedEndInput& in, uint32_t source) {
  const SourceBlockLengths& src = in.sources[source];
  std::vector<uint64_t> w(src.blocks.size());
  for (size_t b = 0; b < w.size(); ++b) {
    w[b] = in.pack ? src.tokens[b] + src.records[b] * in.added_per_document : src.records[b];
  }
  return w;
}

Result<ShardedEnd> ComputeShardedEnd(const ShardedEndInput& in) {
  const uint32_t sources = static_cast<uint32_t>(in.sources.size());
  std::vector<std::vector<uint64_t>> owed(sources);  // by source, then shard
  std::vector<uint64_t> most(sources, 0);            // by source: the most any shard owes
  double total_weight = 0;
  for (double w : in.weights) total_weight += w;
  for (uint32_t i = 0; i < sources; ++i) {
    if (in.weights[i] <= 0) continue;
    owed[i] = SamplesOwed(in, i);
    most[i] = *std::max_element(owed[i].begin(), owed[i].end());
    const double draws = static_cast<double>(most[i]) * total_weight / in.weights[i];
    if (draws > static_cast<double>(kMaxDraws)) {
      return Status::InvalidArgument("source " + std::to_string(i) + "'s weight " + std::to_string(in.weights[i]) +
                                     " is too small a share for its " + std::to_string(most[i]) +
                                     " samples a shard: the run would take more than 2^34 samples a shard; "
                                     "raise it, or bound the run by steps (epochs=0)");
    }
  }
  // Every shard's mixer draws the same sequence from its start: one run of
  // it gives, per source, the draw at which its count reaches each value.
  std::vector<std::vector<uint64_t>> reached(sources);  // by source: draw (1-based) of its c-th sample
  SourceMixer mixer(in.weights);
  uint32_t pending = 0;
  for (uint32_t i = 0; i < sources; ++i) pending += most[i] > 0 ? 1 : 0;
  for (uint64_t drawn = 1; pending > 0; ++drawn) {
    const size_t i = mixer.Next();
    if (reached[i].size() < most[i]) {
      reached[i].push_back(drawn);
      if (reached[i].size() == most[i]) --pending;
    }
  }
  ShardedEnd end;
  for (uint32_t s = 0; s < in.shards; ++s) {
    uint64_t drawn = 0;
    uint32_t last_source = 0;
    for (uint32_t i = 0; i < sources; ++i) {
      if (owed[i].empty() || owed[i][s] == 0) continue;
      const uint64_t at = reached[i][owed[i][s] - 1];
      if (at > drawn) {
        drawn = at;
        last_source = i;
      }
    }
    if (drawn == 0) continue;
    // The shard's sample `drawn - 1` is global sample (drawn - 1) * S + s.
    const uint64_t global = (drawn - 1) * in.shards + s + 1;
    if (global > end.samples) end = {global, s, last_source};
  }
  return end;
}

std::vector<std::pair<uint64_t, uint64_t>> LastWindows(const ShardedEndInput& in, uint32_t shard, uint64_t samples,
                                                       const std::vector<PassDealer*>& dealers) {
  constexpr std::pair<uint64_t, uint64_t> kUnknown{UINT64_MAX, UINT64_MAX};
  const uint32_t sources = static_cast<uint32_t>(in.sources.size());
  std::vector<std::pair<uint64_t, uint64_t>> last(sources, kUnknown);
  // Unpacked without BOS/EOS, a record with no ids makes no row: rows do not
  // follow from lengths.
  if (!in.pack && in.added_per_document == 0) return last;
  SourceMixer mixer(in.weights);
  for (uint64_t n = 0; n < samples; ++n) mixer.Next();
  for (uint32_t i = 0; i < sources; ++i) {
    const uint64_t drawn = mixer.counts()[i];
    const SourceBlockLengths& src = in.sources[i];
    if (drawn == 0 || src.blocks.empty()) continue;
    // What the draws take: packed, their last token (and, peeking, the one
    // after it); unpacked, a document each.
    const uint64_t need = in.pack ? drawn * in.seq_len + (in.peeks_past_row ? 1 : 0) : drawn;
    PassDealer& dealer = *dealers[i];
    const std::vector<uint64_t>& weights = dealer.weights();
    uint64_t have = 0;
    bool found = false;
    // Pass by pass, the shard's blocks in windows of window_blocks.
    for (uint64_t epoch = 0; !found; ++epoch) {
      const std::vector<uint32_t> mine = dealer.Dealt(epoch, shard);
      for (size_t k = 0; k < mine.size(); ++k) {
        have += weights[mine[k]];
        if (have >= need) {
          last[i] = {epoch, k / in.window_blocks};
          found = true;
          break;
        }
      }
      // Blocks that hold nothing never meet the need: the stream reports that.
      if (!found && have == 0 && epoch > in.shards) break;
    }
  }
  return last;
}

}  // namespace tokenfeed::loader
