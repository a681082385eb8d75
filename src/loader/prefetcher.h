// Prefetcher: the loader's prefetch thread. It asks a producer for items ahead
// of the consumer and queues at most `capacity` of them, and beyond the first
// no more than `memory_budget` bytes; an error or end item is the last it asks
// for. Not the producing (the loader's step, batch_loader.cc). Start, Stop and
// Take are for one consumer thread, buffered() for any; the producer runs on
// the prefetch thread between Start and Stop (which joins it) and must not throw.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tokenfeed/loader.h"
#include "tokenfeed/status.h"

namespace tokenfeed::loader {

struct PrefetchItem {
  Status status;
  std::optional<Batch> batch;            // nullopt with OK status: the end
  std::optional<uint32_t> ended_source;  // at the end: the source that ran out
  std::string state;                     // after this batch
  std::vector<LoaderMetrics::SourceConsumption> consumed;  // the token accounting after this batch
  uint64_t bytes = 0;                    // counted against the memory budget
  // The prefetch thread stops after an error or the end.
  bool final() const { return !status.ok() || !batch; }
};

class Prefetcher {
 public:
  Prefetcher(uint32_t capacity, uint64_t memory_budget) : capacity_(capacity), budget_(memory_budget) {}
  ~Prefetcher() { Stop(); }
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;

  // Starts the thread (after Stop, or on a new Prefetcher). ResourceExhausted
  // when the system cannot start one.
  Status Start(std::function<PrefetchItem()> produce);
  // Ends the thread once the producer returns, and drops the queued items.
  void Stop();

  // The next item, waiting for it. ResourceExhausted when the thread could
  // not queue one (out of memory): it has ended, nothing more will come.
  Result<PrefetchItem> Take();

  struct Buffered {
    uint32_t items = 0;
    uint64_t bytes = 0;
  };
  Buffered buffered() const;

 private:
  void Run();

  const uint32_t capacity_;
  const uint64_t budget_;
  std::function<PrefetchItem()> produce_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<PrefetchItem> ready_;
  uint64_t ready_bytes_ = 0;
  bool producer_failed_ = false;  // an item could not be handed over
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace tokenfeed::loader
