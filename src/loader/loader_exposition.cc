#include "loader/loader_exposition.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

#include "metrics/exposition_writer.h"

namespace tokenfeed::loader {

std::string LoaderExposition(const LoaderMetrics& m, uint32_t rank, const std::vector<std::string>& source_uris) {
  metrics::ExpositionWriter w;
  const std::string r = std::to_string(rank);
  auto source_of = [&](uint32_t index) -> std::string {
    return index < source_uris.size() ? source_uris[index] : std::to_string(index);
  };
  auto d = [](uint64_t v) { return static_cast<double>(v); };

  w.Family("tokenfeed_loader_batches_total", "counter", "Batches this rank's loader delivered.");
  w.Sample("tokenfeed_loader_batches_total", {{"rank", r}}, d(m.batches));
  w.Family("tokenfeed_loader_tokens_total", "counter",
           "Tokens (not padding) of the batches this rank's loader delivered; rate() is tokens per second.");
  w.Sample("tokenfeed_loader_tokens_total", {{"rank", r}}, d(m.tokens));

  w.Family("tokenfeed_loader_data_wait_seconds", "histogram",
           "Time each step waited for its batch (the training loop blocked on data).");
  for (size_t i = 0; i < m.wait_buckets.size(); ++i) {
    char le[32];
    std::snprintf(le, sizeof le, "%g", LoaderMetrics::kWaitBucketBounds[i]);
    w.Sample("tokenfeed_loader_data_wait_seconds_bucket", {{"rank", r}, {"le", le}}, d(m.wait_buckets[i]));
  }
  w.Sample("tokenfeed_loader_data_wait_seconds_bucket", {{"rank", r}, {"le", "+Inf"}}, d(m.wait_count));
  w.Sample("tokenfeed_loader_data_wait_seconds_sum", {{"rank", r}}, m.wait_seconds_total);
  w.Sample("tokenfeed_loader_data_wait_seconds_count", {{"rank", r}}, d(m.wait_count));

  w.Family("tokenfeed_loader_prefetch_ready_batches", "gauge", "Batches prefetched and waiting to be taken.");
  w.Sample("tokenfeed_loader_prefetch_ready_batches", {{"rank", r}}, m.ready_batches);
  w.Family("tokenfeed_loader_prefetch_capacity_batches", "gauge", "Batches the prefetcher holds at most.");
  w.Sample("tokenfeed_loader_prefetch_capacity_batches", {{"rank", r}}, m.ready_capacity);
  w.Family("tokenfeed_loader_buffered_bytes", "gauge",
           "Bytes the prefetcher holds: ready batches and the windows of records in use and being read.");
  w.Sample("tokenfeed_loader_buffered_bytes", {{"rank", r}}, d(m.buffered_bytes));

  w.Family("tokenfeed_loader_read_records_total", "counter", "Records read from the sources (read-ahead included).");
  w.Sample("tokenfeed_loader_read_records_total", {{"rank", r}}, d(m.records_read));
  w.Family("tokenfeed_loader_read_bytes_total", "counter", "Bytes of the records read from the sources.");
  w.Sample("tokenfeed_loader_read_bytes_total", {{"rank", r}}, d(m.bytes_read));

  // Sharded, each of the rank's shards reads every partition: one series a
  // partition, the shard furthest behind (the largest lag, the stalest
  // document).
  std::map<std::pair<std::string, uint32_t>, std::pair<uint64_t, double>> partitions;
  for (const LoaderMetrics::PartitionLag& p : m.partition_lag) {
    auto [it, inserted] = partitions.try_emplace({p.uri, p.partition}, p.records_behind, p.freshness_seconds);
    if (!inserted) {
      it->second.first = std::max(it->second.first, p.records_behind);
      it->second.second = std::max(it->second.second, p.freshness_seconds);
    }
  }
  w.Family("tokenfeed_loader_partition_lag_records", "gauge",
           "Records from the last block read to the partition's end, as last checked, per source partition.");
  for (const auto& [key, value] : partitions) {
    const std::string partition = std::to_string(key.second);
    w.Sample("tokenfeed_loader_partition_lag_records", {{"rank", r}, {"source", key.first}, {"partition", partition}},
             d(value.first));
  }
  w.Family("tokenfeed_loader_partition_freshness_seconds", "gauge",
           "Following a live topic: seconds from the append of the partition's last document finished to the step "
           "that finished it.");
  for (const auto& [key, value] : partitions) {
    if (value.second < 0) continue;  // none yet, or not following
    const std::string partition = std::to_string(key.second);
    w.Sample("tokenfeed_loader_partition_freshness_seconds",
             {{"rank", r}, {"source", key.first}, {"partition", partition}}, value.second);
  }

  w.Family("tokenfeed_loader_append_wait_seconds_total", "counter",
           "Following a live topic: time the reading waited for records not yet appended.");
  w.Sample("tokenfeed_loader_append_wait_seconds_total", {{"rank", r}}, m.append_wait_seconds_total);
  w.Family("tokenfeed_loader_waiting_for_appends", "gauge",
           "Following a live topic: 1 while the reading waits for records not yet appended.");
  w.Sample("tokenfeed_loader_waiting_for_appends", {{"rank", r}}, m.waiting_for_appends ? 1 : 0);
  w.Family("tokenfeed_loader_freshness_seconds", "gauge",
           "Following a live topic: seconds from a record's append to the step that finishes its document, "
           "quantiles over the last 4096 documents.");
  w.Sample("tokenfeed_loader_freshness_seconds", {{"rank", r}, {"quantile", "0.5"}}, m.freshness_p50_seconds);
  w.Sample("tokenfeed_loader_freshness_seconds", {{"rank", r}, {"quantile", "0.99"}}, m.freshness_p99_seconds);

  w.Family("tokenfeed_loader_epochs_completed", "gauge", "Passes over each source completed in this round.");
  for (uint32_t s = 0; s < m.epochs_completed.size(); ++s) {
    w.Sample("tokenfeed_loader_epochs_completed", {{"rank", r}, {"source", source_of(s)}}, d(m.epochs_completed[s]));
  }

  // Token accounting: the state's counts (unsharded the whole stream, the
  // same on every rank; sharded this rank's shards).
  w.Family("tokenfeed_loader_source_tokens_total", "counter",
           "Tokens the stream put into rows, per source and epoch (unsharded: all ranks' rows, the same on every "
           "rank; sharded: this rank's shards).");
  for (const LoaderMetrics::SourceConsumption& c : m.consumed) {
    const std::string epoch = std::to_string(c.epoch);
    w.Sample("tokenfeed_loader_source_tokens_total", {{"rank", r}, {"source", source_of(c.source)}, {"epoch", epoch}},
             d(c.tokens));
  }
  w.Family("tokenfeed_loader_source_documents_total", "counter",
           "Documents begun (first token put into a row), per source and epoch (as the tokens).");
  for (const LoaderMetrics::SourceConsumption& c : m.consumed) {
    const std::string epoch = std::to_string(c.epoch);
    w.Sample("tokenfeed_loader_source_documents_total",
             {{"rank", r}, {"source", source_of(c.source)}, {"epoch", epoch}}, d(c.documents));
  }
  return w.Take();
}

}  // namespace tokenfeed::loader
