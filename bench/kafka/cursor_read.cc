// cursor_read: reads a whole topic through topic.h's PartitionCursor (what
// `tokenfeed inspect` and the loader use), one partition after another, and
// prints one line: `cursor records=N bytes=B tokens=T wall_s=W cpu_s=C`.
//   cursor_read URI [--parse] [--no-heap-tuning] [-X key=value ...]
// --parse also parses every record (RecordView) and counts its tokens, the
// least a consumer does with one. CPU is the process's user+system time, the
// librdkafka threads included, so bytes per CPU second is one core's rate.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/heap_tuning.h"
#include "tokenfeed/record.h"
#include "tokenfeed/topic.h"

namespace {

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

[[noreturn]] void Die(const std::string& m) {
  std::fprintf(stderr, "cursor_read: %s\n", m.c_str());
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) Die("usage: cursor_read URI [--parse] [--no-heap-tuning] [-X key=value ...]");
  const std::string uri = argv[1];
  bool parse = false, tune = true;
  tokenfeed::topic::TopicConfig config;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--parse") {
      parse = true;
    } else if (a == "--no-heap-tuning") {
      tune = false;
    } else if (a == "-X" && i + 1 < argc) {
      config.kafka_properties.push_back(argv[++i]);
    } else {
      Die("unknown argument " + a);
    }
  }
  if (tune) tokenfeed::KeepLargeBuffersInHeap();
  const auto started = std::chrono::steady_clock::now();
  const double cpu0 = CpuSeconds();
  auto summary = tokenfeed::topic::DescribeTopic(uri, config);
  if (!summary.ok()) Die(summary.status().ToString());
  uint64_t records = 0, bytes = 0, tokens = 0;
  for (const auto& p : summary->partitions) {
    auto cursor = tokenfeed::topic::OpenPartitionCursor(uri, p.partition, config);
    if (!cursor.ok()) Die(cursor.status().ToString());
    if (auto s = (*cursor)->Seek(p.start_offset); !s.ok()) Die(s.ToString());
    while ((*cursor)->position() < p.end_offset) {
      auto batch = (*cursor)->Read(std::chrono::milliseconds(5000));
      if (!batch.ok()) Die(batch.status().ToString());
      if (batch->empty() && (*cursor)->position() < p.end_offset) Die("no record within 5 s at " + uri);
      // Hot loop: the records are views into the consumer's fetch buffers.
      for (const auto& r : *batch) {
        ++records;
        bytes += r.bytes.size();
        if (parse) {
          auto view = tokenfeed::record::RecordView::Parse(r.bytes);
          if (!view.ok()) Die(view.status().ToString());
          tokens += view->ids().size();
        }
      }
    }
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("cursor records=%llu bytes=%llu tokens=%llu wall_s=%.3f cpu_s=%.3f\n",
              static_cast<unsigned long long>(records), static_cast<unsigned long long>(bytes),
              static_cast<unsigned long long>(tokens), wall, CpuSeconds() - cpu0);
  return 0;
}
