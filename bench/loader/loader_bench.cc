// Loader throughput from the embedded log: batches of int64 ids produced per
// second by one prefetch thread (the consumer only takes them), in GB/s of
// token ids delivered. Topic: $TOKENFEED_BENCH_TOPIC (default the demo's,
// .cache/demo/topics/corpus, which scripts/main.sh ingests).
#include <cstdlib>
#include <string>

#include <benchmark/benchmark.h>

#include "tokenfeed/loader.h"

namespace {

std::string TopicUri() {
  if (const char* t = std::getenv("TOKENFEED_BENCH_TOPIC")) return t;
  return std::string("log:") + TOKENFEED_SOURCE_DIR + "/.cache/demo/topics/corpus";
}

void BM_Loader(benchmark::State& state, bool shuffle, bool int32) {
  tokenfeed::LoaderOptions o;
  o.sources = {{TopicUri(), 1.0}};
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
  for (auto _ : state) {
    auto b = (*loader)->Next();
    if (!b.ok() || !*b) {
      state.SkipWithError("no batch");
      return;
    }
    tokens += (*b)->tokens;
    benchmark::DoNotOptimize((*b)->tokens64.data());
  }
  const double bytes_per_token = int32 ? 4 : 8;
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsRate);
  state.counters["id_GB/s"] =
      benchmark::Counter(static_cast<double>(tokens) * bytes_per_token / 1e9, benchmark::Counter::kIsRate);
  state.SetLabel(TopicUri());
}

BENCHMARK_CAPTURE(BM_Loader, shuffled_int64, true, false)->UseRealTime()->MinTime(3);
BENCHMARK_CAPTURE(BM_Loader, sequential_int64, false, false)->UseRealTime()->MinTime(3);
BENCHMARK_CAPTURE(BM_Loader, shuffled_int32, true, true)->UseRealTime()->MinTime(3);

}  // namespace

BENCHMARK_MAIN();
