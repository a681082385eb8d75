// ShardedEnd: where a finite sharded run ends (docs/loader.md, "Shards",
// "Finite epochs"). Each shard is an endless stream whose windows lie
// within passes, of the blocks each pass deals it (pass_deal.h); a round
// ends after the first global step by which every shard has put into rows
// every token of its blocks of the round's passes over every source. Computed from the blocks'
// lengths alone -- records and stored token ids, which the sources' token
// index gives (tokenfeed/token_index.h) -- so every rank finds the same end
// without reading the other ranks' shards. It decides only where the run
// stops, never what a sample holds. Pure functions: any thread.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "loader/document_order.h"
#include "loader/pass_deal.h"
#include "tokenfeed/status.h"

namespace tokenfeed::loader {

// One source's blocks (MakeBlocks' order) and the records and stored token
// ids each holds.
struct SourceBlockLengths {
  std::vector<Block> blocks;
  std::vector<uint64_t> records;
  std::vector<uint64_t> tokens;
};

struct ShardedEndInput {
  std::vector<SourceBlockLengths> sources;  // by source
  std::vector<double> weights;              // by source; 0: not read, no passes owed
  uint32_t shards = 1;
  uint32_t window_blocks = 1;
  bool shuffle = true;
  uint64_t seed = 0;
  uint64_t passes = 1;  // passes over each source since the run began, to the round's end
  uint32_t seq_len = 1;
  bool pack = true;
  uint32_t added_per_document = 0;  // BOS and EOS the loader adds: 0, 1 or 2
  // A row that ends where a document ends looks at the next document's
  // first token (cross_document_labels).
  bool peeks_past_row = false;
};

struct ShardedEnd {
  uint64_t samples = 0;  // global samples [0, samples) hold every token owed
  uint32_t shard = 0;    // the shard that needs the last of them
  uint32_t source = 0;   // and its source whose passes complete last there
};

// Per block of source `source`: what PassDeal balances (rows' worth of
// tokens packed, records unpacked).
std::vector<uint64_t> DealWeights(const ShardedEndInput& in, uint32_t source);

// The end of the round whose passes `in.passes` counts. Its cost: one visit
// of every block position of the passes, and one mixer draw per sample of
// the longest shard (all shards' mixers draw the same sequence). A weight so
// small that the mixer would draw more than 2^34 times to reach it is
// refused (InvalidArgument), not waited for.
Result<ShardedEnd> ComputeShardedEnd(const ShardedEndInput& in);

// Per source: the last (pass, window) of shard `shard` that its first
// `samples` samples take tokens from; {UINT64_MAX, UINT64_MAX} where that
// cannot be known from lengths (a source it draws nothing from, unpacked
// rows of records that may be empty). A stream need not read ahead past it
// (reading on stays possible, only not ahead of need).
// `dealers` (by source) deal the passes as the streams do and keep `shard`.
std::vector<std::pair<uint64_t, uint64_t>> LastWindows(const ShardedEndInput& in, uint32_t shard, uint64_t samples,
                                                       const std::vector<PassDealer*>& dealers);

}  // namespace tokenfeed::loader
