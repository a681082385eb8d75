// ShardedEnd: where a finite sharded run ends (docs/loader.md, "Shards",
// "Finite epochs"). Each shard is an endless stream; a round of N passes
// ends after the first global step by which every shard has put into rows
// every token of its blocks of the round's passes over every source (up to
// the end of the window that holds its last such block). Computed from the
// blocks' lengths alone -- records and stored token ids, which the sources'
// token index gives (topic/token_index.h) -- so every rank finds the same
// end without reading the other ranks' shards. It decides only where the run
// stops, never what a sample holds. Pure functions: any thread.
#pragma once

#include <cstdint>
#include <vector>

#include "loader/document_order.h"
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
  uint64_t passes = 1;           // passes over each source since the run began, to the round's end
  uint32_t seq_len = 1;
  bool pack = true;
  uint32_t added_per_document = 0;  // BOS and EOS the loader adds: 0, 1 or 2
};

struct ShardedEnd {
  uint64_t samples = 0;  // global samples [0, samples) hold every token owed
  uint32_t shard = 0;    // the shard that needs the last of them
  uint32_t source = 0;   // and its source whose passes complete last there
};

// The end of the round whose passes `in.passes` counts. Its cost is one
// visit of every block position up to the passes' end and one mixer draw
// per sample of the run.
ShardedEnd ComputeShardedEnd(const ShardedEndInput& in);

// Per source: the last of shard `shard`'s windows that its first `samples`
// samples take tokens from (UINT64_MAX: a source it draws nothing from). A
// stream need not read ahead past it (the round's end; reading on is still
// possible, only not ahead of need).
std::vector<uint64_t> LastWindows(const ShardedEndInput& in, uint32_t shard, uint64_t samples);

}  // namespace tokenfeed::loader
