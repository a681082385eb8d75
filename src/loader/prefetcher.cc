#include "loader/prefetcher.h"

#include <system_error>
#include <utility>

namespace tokenfeed::loader {

Status Prefetcher::Start(std::function<PrefetchItem()> produce) {
  produce_ = std::move(produce);
  stop_ = false;
  producer_failed_ = false;
  try {
    thread_ = std::thread([this] { Run(); });
  } catch (const std::system_error& e) {
    return Status::ResourceExhausted(std::string("cannot start the loader's prefetch thread: ") + e.what());
  }
  return Status::OK();
}

void Prefetcher::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mu_);
  ready_.clear();
  ready_bytes_ = 0;
}

Result<PrefetchItem> Prefetcher::Take() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return !ready_.empty() || producer_failed_; });
  if (ready_.empty()) {
    return Status::ResourceExhausted(
        "out of memory handing a batch over from the prefetch thread: lower prefetch_batches or batch_size");
  }
  PrefetchItem item = std::move(ready_.front());
  ready_.pop_front();
  ready_bytes_ -= item.bytes;
  cv_.notify_all();
  return item;
}

Prefetcher::Buffered Prefetcher::buffered() const {
  std::lock_guard lock(mu_);
  return {static_cast<uint32_t>(ready_.size()), ready_bytes_};
}

void Prefetcher::Run() {
  while (true) {
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock,
               [&] { return stop_ || (ready_.size() < capacity_ && (ready_.empty() || ready_bytes_ < budget_)); });
      if (stop_) return;
    }
    PrefetchItem item = produce_();
    bool final_item = item.final();
    {
      std::lock_guard lock(mu_);
      const uint64_t bytes = item.bytes;
      try {
        ready_.push_back(std::move(item));
        ready_bytes_ += bytes;
      } catch (...) {
        producer_failed_ = true;  // Take() reports it
        final_item = true;
      }
    }
    cv_.notify_all();
    if (final_item) return;
  }
}

}  // namespace tokenfeed::loader
