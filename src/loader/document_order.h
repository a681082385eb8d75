// The order in which a loader visits a source's records: pure functions of
// the snapshot (partitions and offsets), the seed and the epoch. Records are
// cut into blocks of consecutive offsets of one partition; an epoch visits
// all blocks in a seeded random order (or, unshuffled, the partitions' blocks
// in turn), and the records of each window of consecutive blocks in a seeded
// random order. So a record can move anywhere at block granularity and
// anywhere within its window. No state, no I/O: safe on any thread.
#pragma once

#include <cstdint>
#include <vector>

namespace tokenfeed::loader {

struct PartitionRange {
  uint64_t start = 0;
  uint64_t end = 0;  // exclusive
  friend bool operator==(const PartitionRange&, const PartitionRange&) = default;
};

struct Block {
  uint32_t partition = 0;
  uint64_t offset = 0;
  uint32_t count = 0;
};

// The blocks of all partitions, partition by partition.
std::vector<Block> MakeBlocks(const std::vector<PartitionRange>& partitions, uint32_t block_records);

// The blocks of `epoch` in visiting order (indices into `blocks`).
std::vector<uint32_t> EpochBlockOrder(const std::vector<Block>& blocks, bool shuffle, uint64_t seed,
                                      uint32_t source, uint64_t epoch);

// Shuffles 0..n-1 for window `window` of `epoch` (identity when !shuffle).
std::vector<uint32_t> WindowRecordOrder(uint32_t n, bool shuffle, uint64_t seed, uint32_t source, uint64_t epoch,
                                        uint64_t window);

// A counter-based generator (splitmix64 over a key): the same key always
// gives the same sequence, whatever thread or process asks.
class KeyedRandom {
 public:
  KeyedRandom(uint64_t seed, uint64_t a, uint64_t b, uint64_t c);
  uint64_t Next();
  // Uniform in [0, bound), without modulo bias (Lemire's method).
  uint64_t Below(uint64_t bound);

 private:
  uint64_t state_;
};

}  // namespace tokenfeed::loader
