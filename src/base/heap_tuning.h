// KeepLargeBuffersInHeap: an opt-in, process-wide glibc malloc setting for
// programs that allocate and free large buffers at a high rate, such as a
// reader of compressed Kafka topics: librdkafka allocates a new ~1 MB buffer
// per decompressed batch; by default glibc mmaps and unmaps such buffers, and
// the page faults cost half the consumer's CPU (docs/kafka.md). Higher
// mmap/trim thresholds keep them in the heap. Call once, early, from main --
// libraries never call it themselves. No effect off glibc.
#pragma once

#include <cstddef>

namespace tokenfeed {

// Returns false when the C library refused (or is not glibc).
bool KeepLargeBuffersInHeap(size_t mmap_threshold = size_t{64} << 20, size_t trim_threshold = size_t{512} << 20);

}  // namespace tokenfeed
