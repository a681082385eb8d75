#include "ingest/progress_reporter.h"

#include <unistd.h>

#include <cstdio>
#include <system_error>

namespace tokenfeed::ingest {

ProgressReporter::ProgressReporter(ProgressMode mode, uint64_t total_input_bytes)
    : total_(total_input_bytes), start_(std::chrono::steady_clock::now()) {
  terminal_ = isatty(STDERR_FILENO);
  enabled_ = mode == ProgressMode::kAlways || (mode == ProgressMode::kAuto);
  if (mode == ProgressMode::kNever) enabled_ = false;
  if (enabled_) {
    try {
      thread_ = std::thread([this] { Loop(); });
    } catch (const std::system_error&) {
      enabled_ = false;  // no thread to be had: the run goes on without progress lines
    }
  }
}

ProgressReporter::~ProgressReporter() { Finish(); }

void ProgressReporter::Finish() {
  {
    std::lock_guard lock(mu_);
    if (done_) return;
    done_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (enabled_ && terminal_) std::fputs("\r\033[K", stderr);
}

void ProgressReporter::Loop() {
  const auto period = terminal_ ? std::chrono::milliseconds(500) : std::chrono::milliseconds(10000);
  std::unique_lock lock(mu_);
  while (!cv_.wait_for(lock, period, [&] { return done_; })) {
    // A progress line is not worth the process: a failure to draw one (out of
    // memory) is passed over, never let out of this thread.
    try {
      Draw(false);
    } catch (...) {
    }
  }
}

void ProgressReporter::Draw(bool) {
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const uint64_t docs = documents_.load(), bytes = text_bytes_.load(), tokens = tokens_.load();
  const uint64_t done_bytes = files_bytes_.load();
  char eta[32] = "?";
  if (total_ > 0 && done_bytes > 0 && secs > 0) {
    double left = secs * (static_cast<double>(total_) / static_cast<double>(done_bytes) - 1.0);
    std::snprintf(eta, sizeof(eta), "%.0fs", left < 0 ? 0 : left);
  }
  const double pct = total_ ? 100.0 * static_cast<double>(done_bytes) / static_cast<double>(total_) : 0.0;
  char line[256];
  std::snprintf(line, sizeof(line),
                "ingest: %5.1f%% of input files | %llu docs | %.1f MB | %.2f M tokens/s | ETA %s", pct,
                static_cast<unsigned long long>(docs), static_cast<double>(bytes) / 1e6,
                secs > 0 ? static_cast<double>(tokens) / secs / 1e6 : 0.0, eta);
  if (terminal_) {
    std::fprintf(stderr, "\r\033[K%s", line);
  } else {
    std::fprintf(stderr, "%s\n", line);
  }
  std::fflush(stderr);
}

}  // namespace tokenfeed::ingest
