// KeepLargeBuffersInHeap: an opt-in, process-wide glibc malloc setting for
// programs that consume compressed Kafka topics fast. librdkafka allocates a
// fresh ~1 MB buffer for every decompressed record batch; with glibc's
// defaults such buffers come from mmap and go back to the kernel when freed,
// so every batch pays page faults (half the consumer's CPU time at lz4 rates,
// docs/kafka.md). Raising the mmap and trim thresholds keeps them in the heap.
// Call once, early, from main (not thread-safe with concurrent allocation
// start-up); a library never calls it on its own. No effect off glibc.
#pragma once

#include <cstddef>

namespace tokenfeed::kafka {

// Returns false when the C library refused (or is not glibc).
bool KeepLargeBuffersInHeap(size_t mmap_threshold = size_t{64} << 20, size_t trim_threshold = size_t{512} << 20);

}  // namespace tokenfeed::kafka
