#include "serve/serve_metrics.h"

#include <cstdio>

namespace tokenfeed::serve {
namespace {

constexpr auto kRateWindow = std::chrono::seconds(10);

std::string LabelValue(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out;
}

void Metric(std::string* out, const char* name, const char* type, const char* help) {
  *out += "# HELP ";
  *out += name;
  *out += " ";
  *out += help;
  *out += "\n# TYPE ";
  *out += name;
  *out += " ";
  *out += type;
  *out += "\n";
}

void Sample(std::string* out, const std::string& name_and_labels, double value) {
  char buf[64];
  if (value == static_cast<double>(static_cast<int64_t>(value))) {
    std::snprintf(buf, sizeof buf, " %lld\n", static_cast<long long>(value));
  } else {
    std::snprintf(buf, sizeof buf, " %.3f\n", value);
  }
  *out += name_and_labels;
  *out += buf;
}

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
  std::string out;
  const std::string topic = "{topic=\"" + LabelValue(input_topic_) + "\"}";
  Metric(&out, "tokenfeed_serve_messages_total", "counter", "Raw messages consumed in committed transactions.");
  Sample(&out, "tokenfeed_serve_messages_total" + topic, static_cast<double>(total_.messages));
  Metric(&out, "tokenfeed_serve_records_total", "counter", "Token records produced in committed transactions.");
  Sample(&out, "tokenfeed_serve_records_total", static_cast<double>(total_.records));
  Metric(&out, "tokenfeed_serve_tokens_total", "counter", "Tokens in the records of committed transactions.");
  Sample(&out, "tokenfeed_serve_tokens_total", static_cast<double>(total_.tokens));
  Metric(&out, "tokenfeed_serve_rejected_total", "counter",
         "Raw messages that produced no record (malformed, or dropped by cleaning), by reason.");
  for (size_t i = 0; i < total_.rejected.size(); ++i) {
    const auto name = text::DropReasonName(static_cast<text::DropReason>(i));
    Sample(&out, "tokenfeed_serve_rejected_total{reason=\"" + std::string(name) + "\"}",
           static_cast<double>(total_.rejected[i]));
  }
  Metric(&out, "tokenfeed_serve_transactions_total", "counter", "Kafka transactions, by outcome.");
  Sample(&out, "tokenfeed_serve_transactions_total{outcome=\"committed\"}", static_cast<double>(committed_));
  Sample(&out, "tokenfeed_serve_transactions_total{outcome=\"aborted\"}", static_cast<double>(aborted_));
  Metric(&out, "tokenfeed_serve_aborted_messages_total", "counter",
         "Raw messages whose work was aborted (they are consumed again).");
  Sample(&out, "tokenfeed_serve_aborted_messages_total", static_cast<double>(aborted_messages_));
  Metric(&out, "tokenfeed_serve_documents_per_second", "gauge",
         "Raw messages committed per second over the last 10 seconds.");
  Sample(&out, "tokenfeed_serve_documents_per_second", RateLocked());
  Metric(&out, "tokenfeed_serve_assigned_partitions", "gauge", "Input partitions assigned to this instance.");
  Sample(&out, "tokenfeed_serve_assigned_partitions", static_cast<double>(lag_.size()));
  Metric(&out, "tokenfeed_serve_consumer_lag", "gauge",
         "Offsets between this instance's read position and the high watermark, per assigned input partition.");
  int64_t total_lag = 0;
  for (const auto& l : lag_) {
    if (l.lag < 0) continue;
    total_lag += l.lag;
    Sample(&out, "tokenfeed_serve_consumer_lag{topic=\"" + LabelValue(input_topic_) + "\",partition=\"" +
                     std::to_string(l.partition) + "\"}",
           static_cast<double>(l.lag));
  }
  Metric(&out, "tokenfeed_serve_consumer_lag_sum", "gauge", "Consumer lag summed over the assigned partitions.");
  Sample(&out, "tokenfeed_serve_consumer_lag_sum", static_cast<double>(total_lag));
  return out;
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
