#include "serve/serve_metrics.h"

#include <cstdio>

#include "metrics/exposition_writer.h"

namespace tokenfeed::serve {
namespace {

constexpr auto kRateWindow = std::chrono::seconds(10);

}  // namespace

ServeMetrics::ServeMetrics(std::string input_topic) : input_topic_(std::move(input_topic)) {}

void ServeMetrics::AddCommitted(const TransactionCounts& c) {
  std::lock_guard lock(mu_);
  total_.messages += c.messages;
  total_.records += c.records;
  total_.tokens += c.tokens;
  for (size_t i = 0; i < c.rejected.size(); ++i) total_.rejected[i] += c.rejected[i];
  ++committed_;
}

void ServeMetrics::AddAborted(uint64_t messages_dropped) {
  std::lock_guard lock(mu_);
  ++aborted_;
  aborted_messages_ += messages_dropped;
}

void ServeMetrics::AddProducerReopened() {
  std::lock_guard lock(mu_);
  ++producer_reopens_;
}

void ServeMetrics::SetLag(std::vector<PartitionLagSample> lag) {
  std::lock_guard lock(mu_);
  lag_ = std::move(lag);
}

void ServeMetrics::Tick(std::chrono::steady_clock::time_point now) {
  std::lock_guard lock(mu_);
  samples_.emplace_back(now, total_.messages);
  while (samples_.size() > 2 && now - samples_.front().first > kRateWindow) samples_.pop_front();
}

double ServeMetrics::RateLocked() const {
  if (samples_.size() < 2) return 0;
  const double seconds = std::chrono::duration<double>(samples_.back().first - samples_.front().first).count();
  return seconds > 0 ? static_cast<double>(samples_.back().second - samples_.front().second) / seconds : 0;
}

uint64_t ServeMetrics::messages() const {
  std::lock_guard lock(mu_);
  return total_.messages;
}

std::string ServeMetrics::RenderPrometheus() const {
  std::lock_guard lock(mu_);
  metrics::ExpositionWriter out;
  out.Family("tokenfeed_serve_messages_total", "counter", "Raw messages consumed in committed transactions.");
  out.Sample("tokenfeed_serve_messages_total", {{"topic", input_topic_}}, static_cast<double>(total_.messages));
  out.Family("tokenfeed_serve_records_total", "counter", "Token records produced in committed transactions.");
  out.Sample("tokenfeed_serve_records_total", static_cast<double>(total_.records));
  out.Family("tokenfeed_serve_tokens_total", "counter", "Tokens in the records of committed transactions.");
  out.Sample("tokenfeed_serve_tokens_total", static_cast<double>(total_.tokens));
  out.Family("tokenfeed_serve_rejected_total", "counter",
             "Raw messages that produced no record (malformed, or dropped by cleaning), by reason.");
  for (size_t i = 0; i < total_.rejected.size(); ++i) {
    const auto name = text::DropReasonName(static_cast<text::DropReason>(i));
    out.Sample("tokenfeed_serve_rejected_total", {{"reason", name}}, static_cast<double>(total_.rejected[i]));
  }
  out.Family("tokenfeed_serve_transactions_total", "counter", "Kafka transactions, by outcome.");
  out.Sample("tokenfeed_serve_transactions_total", {{"outcome", "committed"}}, static_cast<double>(committed_));
  out.Sample("tokenfeed_serve_transactions_total", {{"outcome", "aborted"}}, static_cast<double>(aborted_));
  out.Family("tokenfeed_serve_aborted_messages_total", "counter",
             "Raw messages whose work was aborted (they are consumed again).");
  out.Sample("tokenfeed_serve_aborted_messages_total", static_cast<double>(aborted_messages_));
  out.Family("tokenfeed_serve_producer_reopens_total", "counter",
             "Transactional producers replaced by a new one after a fatal error or a failed abort.");
  out.Sample("tokenfeed_serve_producer_reopens_total", static_cast<double>(producer_reopens_));
  out.Family("tokenfeed_serve_documents_per_second", "gauge",
             "Raw messages committed per second over the last 10 seconds.");
  out.Sample("tokenfeed_serve_documents_per_second", RateLocked());
  out.Family("tokenfeed_serve_assigned_partitions", "gauge", "Input partitions assigned to this instance.");
  out.Sample("tokenfeed_serve_assigned_partitions", static_cast<double>(lag_.size()));
  out.Family("tokenfeed_serve_consumer_lag", "gauge",
             "Offsets between this instance's read position and the high watermark, per assigned input partition.");
  int64_t total_lag = 0;
  for (const auto& l : lag_) {
    if (l.lag < 0) continue;
    total_lag += l.lag;
    const std::string partition = std::to_string(l.partition);
    out.Sample("tokenfeed_serve_consumer_lag", {{"topic", input_topic_}, {"partition", partition}},
               static_cast<double>(l.lag));
  }
  out.Family("tokenfeed_serve_consumer_lag_sum", "gauge", "Consumer lag summed over the assigned partitions.");
  out.Sample("tokenfeed_serve_consumer_lag_sum", static_cast<double>(total_lag));
  return out.Take();
}

std::string ServeMetrics::Summary() const {
  std::lock_guard lock(mu_);
  uint64_t rejected = 0;
  for (uint64_t r : total_.rejected) rejected += r;
  int64_t lag = 0;
  for (const auto& l : lag_) lag += l.lag > 0 ? l.lag : 0;
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "%llu messages (%.0f/s), %llu records, %.2f M tokens, %llu rejected, lag %lld on %zu partitions, "
                "%llu transactions (%llu aborted)",
                static_cast<unsigned long long>(total_.messages), RateLocked(),
                static_cast<unsigned long long>(total_.records), static_cast<double>(total_.tokens) / 1e6,
                static_cast<unsigned long long>(rejected), static_cast<long long>(lag), lag_.size(),
                static_cast<unsigned long long>(committed_ + aborted_), static_cast<unsigned long long>(aborted_));
  return buf;
}

}  // namespace tokenfeed::serve
