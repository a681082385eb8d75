// Loader throughput from the embedded log: batches of int64 ids produced per
// second by one prefetch thread (the consumer only takes them), in GB/s of
// token ids delivered. Topic: $TOKENFEED_BENCH_TOPIC (default the demo's,
// .cache/demo/topics/corpus, which scripts/main.sh ingests).
// A small topic lies wholly in each partition's active segment, which a
// reader copies out with pread; the partitions of a large one are nearly all
// sealed segments, read in place from a memory map. The *_sealed runs read a
// copy of the topic with 512 KiB segments (made once, beside the build), to
// show the second case.
// id_GB/cpu_s divides the ids delivered by the CPU time of the whole process
// (the prefetch thread, the window readers and the consumer): GB of ids per
// core-second.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <sys/resource.h>

#include <benchmark/benchmark.h>

#include "tokenfeed/loader.h"
#include "log/log.h"
#include "log/log_batch.h"

namespace {

std::string TopicUri() {
  if (const char* t = std::getenv("TOKENFEED_BENCH_TOPIC")) return t;
  return std::string("log:") + TOKENFEED_SOURCE_DIR + "/.cache/demo/topics/corpus";
}

double ProcessCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// The records of `uri` copied batch by batch into a topic whose segments
// hold 512 KiB, under the build directory; made once and reused while it
// has as many records as the source.
tokenfeed::Result<std::string> SealedCopy(const std::string& uri) {
  namespace log = tokenfeed::log;
  TF_ASSIGN_OR_RETURN(auto src, log::TopicDirectory::Open(uri));
  TF_ASSIGN_OR_RETURN(log::TopicDescription want, src->Describe());
  const std::string dir = std::string(TOKENFEED_BINARY_DIR) + "/loader_bench_topics";
  const std::string copy_uri = "log:" + dir + "/sealed";
  if (auto existing = log::TopicDirectory::Open(copy_uri); existing.ok()) {
    TF_ASSIGN_OR_RETURN(log::TopicDescription have, (*existing)->Describe());
    bool same = have.partitions.size() == want.partitions.size();
    for (size_t p = 0; same && p < want.partitions.size(); ++p) {
      same = have.partitions[p].record_count == want.partitions[p].record_count;
    }
    if (same) return copy_uri;
    TF_RETURN_IF_ERROR(log::TopicDirectory::Delete(copy_uri));
  }
  std::filesystem::create_directories(dir);
  log::TopicOptions options = src->options();
  options.segment_bytes = 512 << 10;
  TF_ASSIGN_OR_RETURN(auto dst, log::TopicDirectory::Create(copy_uri, options));
  log::WriterOptions wo;
  wo.fsync = log::FsyncPolicy::kNone;
  for (uint32_t p = 0; p < src->partition_count(); ++p) {
    TF_ASSIGN_OR_RETURN(auto reader, src->OpenReader(tokenfeed::PartitionId(p)));
    TF_ASSIGN_OR_RETURN(auto writer, dst->OpenWriter(tokenfeed::PartitionId(p), wo));
    TF_ASSIGN_OR_RETURN(tokenfeed::Offset end, reader->EndOffset());
    log::BatchBuilder batch;
    while (reader->position() < end) {
      TF_ASSIGN_OR_RETURN(log::BatchView view, reader->Read());
      batch.Clear();
      for (const log::LogRecord& r : view) batch.Add(r.bytes);
      TF_RETURN_IF_ERROR(writer->Append(&batch).status());
    }
    TF_RETURN_IF_ERROR(writer->Close());
  }
  return copy_uri;
}

void BM_Loader(benchmark::State& state, bool shuffle, bool int32, bool sealed) {
  std::string uri = TopicUri();
  if (sealed) {
    auto copy = SealedCopy(uri);
    if (!copy.ok()) {
      state.SkipWithError(copy.status().ToString().c_str());
      return;
    }
    uri = *copy;
  }
  tokenfeed::LoaderOptions o;
  o.sources = {{uri, 1.0}};
  o.seq_len = 2048;
  o.batch_size = 8;
  o.epochs = 0;
  o.shuffle = shuffle;
  o.int32_ids = int32;
  auto loader = tokenfeed::Loader::Create(o);
  if (!loader.ok()) {
    state.SkipWithError(loader.status().ToString().c_str());
    return;
  }
  uint64_t tokens = 0;
  const double cpu0 = ProcessCpuSeconds();
  for (auto _ : state) {
    auto b = (*loader)->Next();
    if (!b.ok() || !*b) {
      state.SkipWithError("no batch");
      return;
    }
    tokens += (*b)->tokens;
    benchmark::DoNotOptimize((*b)->tokens64.data());
  }
  const double cpu = ProcessCpuSeconds() - cpu0;
  const double bytes_per_token = int32 ? 4 : 8;
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsRate);
  state.counters["id_GB/s"] =
      benchmark::Counter(static_cast<double>(tokens) * bytes_per_token / 1e9, benchmark::Counter::kIsRate);
  state.counters["id_GB/cpu_s"] = static_cast<double>(tokens) * bytes_per_token / 1e9 / cpu;
  state.SetLabel(uri);
}

BENCHMARK_CAPTURE(BM_Loader, shuffled_int64, true, false, false)->UseRealTime()->MinTime(3);
BENCHMARK_CAPTURE(BM_Loader, sequential_int64, false, false, false)->UseRealTime()->MinTime(3);
BENCHMARK_CAPTURE(BM_Loader, shuffled_int32, true, true, false)->UseRealTime()->MinTime(3);
BENCHMARK_CAPTURE(BM_Loader, shuffled_int64_sealed, true, false, true)->UseRealTime()->MinTime(3);
BENCHMARK_CAPTURE(BM_Loader, sequential_int64_sealed, false, false, true)->UseRealTime()->MinTime(3);

}  // namespace

BENCHMARK_MAIN();
