#include "loader/document_order.h"

#include <algorithm>
#include <numeric>

namespace tokenfeed::loader {
namespace {

uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

template <typename T>
void Shuffle(std::vector<T>& v, KeyedRandom& rng) {
  for (size_t i = v.size(); i > 1; --i) {
    size_t j = static_cast<size_t>(rng.Below(i));
    std::swap(v[i - 1], v[j]);
  }
}

}  // namespace

KeyedRandom::KeyedRandom(uint64_t seed, uint64_t a, uint64_t b, uint64_t c)
    : state_(Mix(Mix(Mix(seed ^ 0x746F6B656E66656EULL) ^ a) ^ (b * 0x9E3779B97F4A7C15ULL)) ^ c) {}

uint64_t KeyedRandom::Next() {
  state_ += 0x9E3779B97F4A7C15ULL;
  return Mix(state_);
}

uint64_t KeyedRandom::Below(uint64_t bound) {
  // Lemire: multiply into 128 bits, reject the small biased band.
  while (true) {
    __extension__ using Wide = unsigned __int128;  // GCC and Clang; the extension keeps -Wpedantic quiet
    Wide m = static_cast<Wide>(Next()) * bound;
    uint64_t low = static_cast<uint64_t>(m);
    if (low >= bound || low >= (-bound) % bound) return static_cast<uint64_t>(m >> 64);
  }
}

std::vector<Block> MakeBlocks(const std::vector<PartitionRange>& partitions, uint32_t block_records) {
  std::vector<Block> blocks;
  for (uint32_t p = 0; p < partitions.size(); ++p) {
    for (uint64_t o = partitions[p].start; o < partitions[p].end; o += block_records) {
      uint64_t n = std::min<uint64_t>(block_records, partitions[p].end - o);
      blocks.push_back({p, o, static_cast<uint32_t>(n)});
    }
  }
  return blocks;
}

std::vector<uint32_t> EpochBlockOrder(const std::vector<Block>& blocks, bool shuffle, uint64_t seed,
                                      uint32_t source, uint64_t epoch) {
  std::vector<uint32_t> order(blocks.size());
  std::iota(order.begin(), order.end(), 0u);
  if (shuffle) {
    KeyedRandom rng(seed, source, epoch, ~uint64_t{0});
    Shuffle(order, rng);
    return order;
  }
  // Unshuffled: the first block of every partition, then the second, ...
  std::vector<uint32_t> rank_in_partition(blocks.size());
  std::vector<uint32_t> seen;
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (blocks[i].partition >= seen.size()) seen.resize(blocks[i].partition + 1, 0);
    rank_in_partition[i] = seen[blocks[i].partition]++;
  }
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (rank_in_partition[a] != rank_in_partition[b]) return rank_in_partition[a] < rank_in_partition[b];
    return blocks[a].partition < blocks[b].partition;
  });
  return order;
}

std::vector<uint32_t> WindowRecordOrder(uint32_t n, bool shuffle, uint64_t seed, uint32_t source, uint64_t epoch,
                                        uint64_t window) {
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  if (shuffle) {
    KeyedRandom rng(seed, source, epoch, window);
    Shuffle(order, rng);
  }
  return order;
}

}  // namespace tokenfeed::loader
