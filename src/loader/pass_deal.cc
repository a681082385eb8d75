#include "loader/pass_deal.h"

#include <functional>
#include <queue>
#include <utility>

namespace tokenfeed::loader {

std::vector<uint32_t> DealPass(const std::vector<uint32_t>& order, const std::vector<uint64_t>& weight,
                               std::vector<uint64_t>* loads) {
  using Entry = std::pair<uint64_t, uint32_t>;  // total, shard: the least first, ties to the lowest shard
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> least;
  for (uint32_t s = 0; s < loads->size(); ++s) least.push({(*loads)[s], s});
  std::vector<uint32_t> shard_of(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    auto [total, s] = least.top();
    least.pop();
    shard_of[i] = s;
    total += weight[order[i]];
    (*loads)[s] = total;
    least.push({total, s});
  }
  return shard_of;
}

PassDealer::PassDealer(std::vector<Block> blocks, std::vector<uint64_t> weights, uint32_t shards, bool shuffle,
                       uint64_t seed, uint32_t source, std::vector<uint32_t> kept_shards)
    : blocks_(std::move(blocks)), weights_(std::move(weights)), shuffle_(shuffle), seed_(seed), source_(source) {
  loads_.assign(shards, 0);
  for (uint32_t s : kept_shards) kept_[s];
}

const std::vector<uint32_t>& PassDealer::DealtLocked(uint64_t epoch, uint32_t shard) {
  while (passes_dealt_ <= epoch) {
    const std::vector<uint32_t> order = EpochBlockOrder(blocks_, shuffle_, seed_, source_, passes_dealt_);
    const std::vector<uint32_t> shard_of = DealPass(order, weights_, &loads_);
    for (auto& [s, passes] : kept_) passes.emplace_back();
    for (size_t i = 0; i < order.size(); ++i) {
      auto it = kept_.find(shard_of[i]);
      if (it != kept_.end()) it->second.back().push_back(order[i]);
    }
    ++passes_dealt_;
  }
  return kept_.at(shard)[epoch];
}

std::vector<uint32_t> PassDealer::Dealt(uint64_t epoch, uint32_t shard) {
  std::lock_guard lock(mu_);
  return DealtLocked(epoch, shard);
}

uint64_t PassDealer::CountDealt(uint64_t epoch, uint32_t shard) {
  std::lock_guard lock(mu_);
  return DealtLocked(epoch, shard).size();
}

}  // namespace tokenfeed::loader
