#include "loader/sharded_end.h"

#include <algorithm>

#include "loader/source_mixer.h"

namespace tokenfeed::loader {
namespace {

// Per shard: the samples source `source` owes, i.e. those that hold the
// tokens of the shard's windows up to the one with its last block of the
// passes.
std::vector<uint64_t> SamplesOwed(const ShardedEndInput& in, uint32_t source) {
  const SourceBlockLengths& src = in.sources[source];
  const uint64_t S = in.shards, wb = in.window_blocks, nb = src.blocks.size();
  std::vector<uint64_t> owed(S, 0);
  if (nb == 0) return owed;
  const uint64_t positions = in.passes * nb;  // of the endless sequence, in the passes
  // Shard s holds positions s, s + S, ...; it owes its windows through the
  // one holding its last position below `positions`.
  std::vector<uint64_t> local_blocks(S, 0);
  uint64_t last = 0;  // the last position any shard owes
  for (uint64_t s = 0; s < S; ++s) {
    if (positions <= s) continue;
    const uint64_t m_last = (positions - 1 - s) / S;
    local_blocks[s] = (m_last / wb + 1) * wb;
    last = std::max(last, s + (local_blocks[s] - 1) * S);
  }
  std::vector<uint64_t> tokens(S, 0), records(S, 0);
  std::vector<uint32_t> order;
  uint64_t order_epoch = UINT64_MAX;
  for (uint64_t g = 0; g <= last; ++g) {
    const uint64_t s = g % S;
    if (g / S >= local_blocks[s]) continue;
    const uint64_t epoch = g / nb;
    if (epoch != order_epoch) {
      order = EpochBlockOrder(src.blocks, in.shuffle, in.seed, source, epoch);
      order_epoch = epoch;
    }
    const uint32_t b = order[g % nb];
    tokens[s] += src.tokens[b];
    records[s] += src.records[b];
  }
  for (uint64_t s = 0; s < S; ++s) {
    if (in.pack) {
      const uint64_t laid = tokens[s] + records[s] * in.added_per_document;
      owed[s] = (laid + in.seq_len - 1) / in.seq_len;
    } else {
      owed[s] = records[s];  // a row per document
    }
  }
  return owed;
}

}  // namespace

ShardedEnd ComputeShardedEnd(const ShardedEndInput& in) {
  const uint32_t sources = static_cast<uint32_t>(in.sources.size());
  std::vector<std::vector<uint64_t>> owed(sources);  // by source, then shard
  for (uint32_t i = 0; i < sources; ++i) {
    if (in.weights[i] > 0) owed[i] = SamplesOwed(in, i);
  }
  ShardedEnd end;
  for (uint32_t s = 0; s < in.shards; ++s) {
    // The shard's own mixer, from its start, until every source has been
    // drawn as often as it owes.
    SourceMixer mixer(in.weights);
    uint32_t pending = 0;
    uint32_t last_source = 0;
    for (uint32_t i = 0; i < sources; ++i) {
      if (in.weights[i] > 0 && owed[i][s] > 0) ++pending;
    }
    uint64_t drawn = 0;
    while (pending > 0) {
      const size_t i = mixer.Next();
      ++drawn;
      if (mixer.counts()[i] == owed[i][s]) {
        --pending;
        last_source = static_cast<uint32_t>(i);
      }
    }
    if (drawn == 0) continue;
    // The shard's sample `drawn - 1` is global sample (drawn - 1) * S + s.
    const uint64_t global = (drawn - 1) * in.shards + s + 1;
    if (global > end.samples) end = {global, s, last_source};
  }
  return end;
}

std::vector<uint64_t> LastWindows(const ShardedEndInput& in, uint32_t shard, uint64_t samples) {
  const uint32_t sources = static_cast<uint32_t>(in.sources.size());
  SourceMixer mixer(in.weights);
  for (uint64_t n = 0; n < samples; ++n) mixer.Next();
  std::vector<uint64_t> last(sources, UINT64_MAX);
  for (uint32_t i = 0; i < sources; ++i) {
    const uint64_t drawn = mixer.counts()[i];
    const SourceBlockLengths& src = in.sources[i];
    const uint64_t nb = src.blocks.size();
    if (drawn == 0 || nb == 0) continue;
    // What the draws take: packed, their last token; unpacked, a document each.
    const uint64_t need = in.pack ? drawn * in.seq_len : drawn;
    uint64_t have = 0;
    std::vector<uint32_t> order;
    uint64_t order_epoch = UINT64_MAX;
    for (uint64_t m = 0;; ++m) {
      const uint64_t g = shard + m * in.shards;
      if (g / nb != order_epoch) {
        order_epoch = g / nb;
        order = EpochBlockOrder(src.blocks, in.shuffle, in.seed, i, order_epoch);
      }
      const uint32_t b = order[g % nb];
      have += in.pack ? src.tokens[b] + src.records[b] * in.added_per_document : src.records[b];
      if (have >= need) {
        last[i] = m / in.window_blocks;
        break;
      }
      // A source whose blocks hold nothing (its stream reports that) has no last window.
      if (m > (nb + 1) * (in.passes + 1) * 4 && have == 0) break;
    }
  }
  return last;
}

}  // namespace tokenfeed::loader
