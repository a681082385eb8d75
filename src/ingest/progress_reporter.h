// ProgressReporter: the ingest's progress on standard error -- a bar
// redrawn in place on a terminal (documents, MB, tokens/s, ETA), a plain line
// every 10 s otherwise, nothing with ProgressMode::kNever. Counters are
// atomics bumped from the reader and writer threads; a background thread
// draws. Finish() stops it and clears the bar.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "tokenfeed/ingest.h"

namespace tokenfeed::ingest {

class ProgressReporter {
 public:
  ProgressReporter(ProgressMode mode, uint64_t total_input_bytes);
  ~ProgressReporter();

  void Document(size_t bytes) {
    documents_.fetch_add(1, std::memory_order_relaxed);
    text_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  }
  void FileDone(uint64_t file_bytes) { files_bytes_.fetch_add(file_bytes, std::memory_order_relaxed); }
  void Tokens(uint64_t n) { tokens_.fetch_add(n, std::memory_order_relaxed); }
  void Finish();

 private:
  void Loop();
  void Draw(bool final_line);

  bool enabled_ = false;
  bool terminal_ = false;
  uint64_t total_;
  std::atomic<uint64_t> documents_{0}, text_bytes_{0}, files_bytes_{0}, tokens_{0};
  std::chrono::steady_clock::time_point start_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace tokenfeed::ingest
