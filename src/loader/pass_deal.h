// PassDeal: how a finite sharded run deals each pass's blocks to its shards
// (docs/loader.md, "Finite epochs"). In the pass's block order, each block
// goes to the shard dealt the least so far -- counted from the first pass
// on, in rows' worth of tokens (packed: ids plus the BOS/EOS the loader
// adds; unpacked: records) -- ties to the lowest shard. So after every pass
// the totals of any two shards differ by at most one block's, and every
// shard gets blocks however few a source has. A pure function of the block
// orders, the weights and the shard count: every rank deals alike. Not the
// endless sharded run's dealing (position g to shard g mod S).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "loader/document_order.h"

namespace tokenfeed::loader {

// Deals one pass: `order` (block indices in the pass's order) by `weight`
// (by block index), on from the shards' totals in *loads (updated); returns
// the shard of each position of `order`.
std::vector<uint32_t> DealPass(const std::vector<uint32_t>& order, const std::vector<uint64_t>& weight,
                               std::vector<uint64_t>* loads);

// The deals of one source, pass by pass, kept for the shards asked about.
// Thread-safe (one mutex): a stream's reader thread and its owner ask it.
class PassDealer {
 public:
  PassDealer(std::vector<Block> blocks, std::vector<uint64_t> weights, uint32_t shards, bool shuffle, uint64_t seed,
             uint32_t source, std::vector<uint32_t> kept_shards);
  // The blocks (indices, in the pass's order) pass `epoch` deals to `shard`
  // (one of the kept shards).
  std::vector<uint32_t> Dealt(uint64_t epoch, uint32_t shard);
  uint64_t CountDealt(uint64_t epoch, uint32_t shard);
  // What each block weighs in the deal (by block index); never changes.
  const std::vector<uint64_t>& weights() const { return weights_; }

 private:
  const std::vector<uint32_t>& DealtLocked(uint64_t epoch, uint32_t shard);

  const std::vector<Block> blocks_;
  const std::vector<uint64_t> weights_;
  const bool shuffle_;
  const uint64_t seed_;
  const uint32_t source_;
  std::mutex mu_;
  std::vector<uint64_t> loads_;  // every shard's total after the passes dealt
  std::map<uint32_t, std::vector<std::vector<uint32_t>>> kept_;  // by shard, then pass
  uint64_t passes_dealt_ = 0;
};

}  // namespace tokenfeed::loader
