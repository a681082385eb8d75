// Embedded log throughput: append (fsync none and each-batch, large batches)
// and sequential read from the page cache, beside memcpy of the same bytes in
// the same run. Prints the read/memcpy ratio first (goal: at least 0.5), then
// runs the Google Benchmark cases.
//
//   build/release/bench/log/log_bench                       # 512 MiB of data in $TMPDIR
//   TOKENFEED_BENCH_BYTES=1073741824 build/release/bench/log/log_bench
//
// Records are real token records (record.h) of 2000 u16 ids (~4 KiB), in
// batches of 4 MiB; the reader checks every batch's CRC32C, as by default.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "base/crc32c.h"
#include "base/scoped_temp_dir.h"
#include "log/log.h"
#include "tokenfeed/record.h"

namespace tokenfeed::log {
namespace {

constexpr size_t kBatchBytes = size_t{4} << 20;
constexpr size_t kIdsPerRecord = 2000;

uint64_t DataBytes() {
  const char* env = std::getenv("TOKENFEED_BENCH_BYTES");
  return env != nullptr ? std::strtoull(env, nullptr, 10) : uint64_t{512} << 20;
}

void Check(const Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "log_bench: %s\n", s.ToString().c_str());
    std::exit(1);
  }
}

// One batch of token records, encoded once and appended many times.
BatchBuilder MakeBatch() {
  std::vector<uint32_t> ids(kIdsPerRecord);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<uint32_t>((i * 7919) % 50257);
  BatchBuilder b;
  record::RecordFields fields;
  fields.source_path = "/data/corpus/shard-00042.jsonl.zst";
  record::RecordEncoder enc;
  for (uint64_t doc = 0; b.size_bytes() < kBatchBytes; ++doc) {
    fields.doc_seq = doc;
    fields.source_line = doc + 1;
    Check(enc.Prepare(fields, ids));
    enc.WriteTo(b.AddUninitialized(enc.size()));
  }
  return b;
}

// Appends batches to partition 0 of a new topic until `bytes` are written.
uint64_t AppendAll(const std::string& uri, FsyncPolicy policy, uint64_t bytes, BatchBuilder* batch,
                   uint64_t segment_bytes = uint64_t{256} << 20) {
  TopicOptions options;
  options.segment_bytes = segment_bytes;
  auto topic = TopicDirectory::Create(uri, options);
  Check(topic.status());
  WriterOptions o;
  o.fsync = policy;
  auto w = (*topic)->OpenWriter(PartitionId(0), o);
  Check(w.status());
  uint64_t written = 0;
  while (written < bytes) {
    Check((*w)->Append(batch).status());
    written += batch->size_bytes();
  }
  Check((*w)->Close());
  return written;
}

// Reads partition 0 from the start; returns the record bytes seen.
uint64_t ReadAll(TopicDirectory* topic) {
  auto r = topic->OpenReader(PartitionId(0));
  Check(r.status());
  uint64_t bytes = 0;
  for (;;) {
    auto b = (*r)->Read();
    Check(b.status());
    if (b->empty()) break;
    for (LogRecord rec : *b) bytes += rec.bytes.size();
  }
  return bytes;
}

// The topics the read benchmarks use, written once: one with 64 MiB
// segments (nearly all of it in sealed segments, read through mmap) and one
// whose single segment is still active (read through pread, as a reader
// following the writer's tail does).
struct ReadFixture {
  ScopedTempDir dir;
  std::string sealed_uri = "log:" + dir.Join("bench-read-sealed");
  std::string active_uri = "log:" + dir.Join("bench-read-active");
  std::unique_ptr<TopicDirectory> sealed, active;
  uint64_t stored_bytes = 0;

  ReadFixture() {
    BatchBuilder batch = MakeBatch();
    stored_bytes = AppendAll(sealed_uri, FsyncPolicy::kNone, DataBytes(), &batch, uint64_t{64} << 20);
    AppendAll(active_uri, FsyncPolicy::kNone, DataBytes(), &batch, uint64_t{2} << 30);
    auto t = TopicDirectory::Open(sealed_uri);
    Check(t.status());
    sealed = std::move(t).value();
    t = TopicDirectory::Open(active_uri);
    Check(t.status());
    active = std::move(t).value();
    ReadAll(sealed.get());  // warm the page cache
    ReadAll(active.get());
  }
};

// Destroyed at exit, which removes its data.
ReadFixture& Fixture() {
  static ReadFixture f;
  return f;
}

double Seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

// memcpy of the same number of bytes the read moves, between two buffers
// of that size (so neither fits in a cache), pre-faulted.
struct CopyBuffers {
  std::unique_ptr<char[]> src, dst;
  size_t n;
  explicit CopyBuffers(size_t bytes) : src(new char[bytes]), dst(new char[bytes]), n(bytes) {
    std::memset(src.get(), 1, n);
    std::memset(dst.get(), 2, n);
  }
};

void PrintRatioFirst() {
  ReadFixture& f = Fixture();
  CopyBuffers copy(f.stored_bytes);
  double best_copy = 1e9, best_sealed = 1e9, best_active = 1e9;
  for (int i = 0; i < 5; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    std::memcpy(copy.dst.get(), copy.src.get(), copy.n);
    benchmark::DoNotOptimize(copy.dst.get());
    auto t1 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(ReadAll(f.sealed.get()));
    auto t2 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(ReadAll(f.active.get()));
    auto t3 = std::chrono::steady_clock::now();
    best_copy = std::min(best_copy, Seconds(t1 - t0));
    best_sealed = std::min(best_sealed, Seconds(t2 - t1));
    best_active = std::min(best_active, Seconds(t3 - t2));
  }
  const double gb = static_cast<double>(f.stored_bytes) / 1e9;
  std::printf("read/memcpy = %.2f   sequential read %.2f GB/s (sealed segments, mmap), memcpy %.2f GB/s\n",
              best_copy / best_sealed, gb / best_sealed, gb / best_copy);
  std::printf("read/memcpy = %.2f   sequential read %.2f GB/s (active segment, pread into the reader's buffer)\n",
              best_copy / best_active, gb / best_active);
  std::printf("  %.0f MiB of 4 MiB batches, CRC32C (%s) checked on every batch, page cache warm, best of 5\n",
              static_cast<double>(f.stored_bytes) / (1 << 20), crc32c::HardwareAccelerated() ? "SSE4.2" : "portable");
  std::fflush(stdout);
}

void BM_Memcpy(benchmark::State& state) {
  CopyBuffers copy(Fixture().stored_bytes);
  for (auto _ : state) {
    std::memcpy(copy.dst.get(), copy.src.get(), copy.n);
    benchmark::DoNotOptimize(copy.dst.get());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * copy.n));
}
BENCHMARK(BM_Memcpy)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_LogSequentialRead(benchmark::State& state) {
  ReadFixture& f = Fixture();
  TopicDirectory* topic = state.range(0) == 0 ? f.sealed.get() : f.active.get();
  for (auto _ : state) benchmark::DoNotOptimize(ReadAll(topic));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * f.stored_bytes));
  state.SetLabel(state.range(0) == 0 ? "sealed segments (mmap)" : "active segment (pread)");
}
BENCHMARK(BM_LogSequentialRead)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_LogSequentialReadParseRecords(benchmark::State& state) {
  ReadFixture& f = Fixture();
  for (auto _ : state) {
    auto r = f.sealed->OpenReader(PartitionId(0));
    Check(r.status());
    uint64_t ids = 0;
    for (;;) {
      auto b = (*r)->Read();
      Check(b.status());
      if (b->empty()) break;
      for (LogRecord rec : *b) {
        auto v = record::RecordView::Parse(rec.bytes);
        Check(v.status());
        ids += v->ids().size();
      }
    }
    benchmark::DoNotOptimize(ids);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * f.stored_bytes));
}
BENCHMARK(BM_LogSequentialReadParseRecords)->Unit(benchmark::kMillisecond)->UseRealTime();

// Times only the appends: one 2 GiB segment, so no roll syncs, and Close()
// (which syncs whatever the policy) outside the timing. "none" is then the
// rate into the page cache; "each-batch" pays an fdatasync per 4 MiB batch.
void BM_LogAppend(benchmark::State& state) {
  const FsyncPolicy policy = state.range(0) == 0 ? FsyncPolicy::kNone : FsyncPolicy::kEachBatch;
  const uint64_t bytes = std::min<uint64_t>(DataBytes(), uint64_t{256} << 20);
  BatchBuilder batch = MakeBatch();
  uint64_t total = 0;
  for (auto _ : state) {
    state.PauseTiming();
    ScopedTempDir dir;
    TopicOptions options;
    options.segment_bytes = uint64_t{2} << 30;
    auto topic = TopicDirectory::Create("log:" + dir.Join("bench-append"), options);
    Check(topic.status());
    WriterOptions o;
    o.fsync = policy;
    auto w = (*topic)->OpenWriter(PartitionId(0), o);
    Check(w.status());
    state.ResumeTiming();
    for (uint64_t written = 0; written < bytes; written += batch.size_bytes()) {
      Check((*w)->Append(&batch).status());
      total += batch.size_bytes();
    }
    state.PauseTiming();
    Check((*w)->Close());
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<int64_t>(total));
  state.SetLabel(policy == FsyncPolicy::kNone ? "fsync none, 4 MiB batches" : "fsync each-batch, 4 MiB batches");
}
BENCHMARK(BM_LogAppend)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

void BM_Crc32c(benchmark::State& state) {
  std::vector<uint8_t> buf(size_t{4} << 20, 0x5a);
  const bool hardware = state.range(0) == 1;
  if (hardware && !crc32c::HardwareAccelerated()) {
    state.SkipWithError("no SSE4.2 on this CPU");
    return;
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(hardware ? crc32c::ExtendHardware(0, buf.data(), buf.size())
                                      : crc32c::ExtendPortable(0, buf.data(), buf.size()));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * buf.size()));
  state.SetLabel(hardware ? "SSE4.2, 3 streams" : "portable slicing-by-8");
}
BENCHMARK(BM_Crc32c)->Arg(0)->Arg(1);

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

}  // namespace
}  // namespace tokenfeed::log

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  std::printf("machine: %s, %ld cores; data in %s\n", tokenfeed::log::CpuModel().c_str(), ::sysconf(_SC_NPROCESSORS_ONLN),
              std::getenv("TMPDIR") != nullptr ? std::getenv("TMPDIR") : "/tmp");
  tokenfeed::log::PrintRatioFirst();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
