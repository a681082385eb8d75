// Single-thread and all-core encode throughput of tokenfeed's tokenizer on
// the benchmark corpus, per vocabulary, fast scanners and general path.
// The side-by-side comparison with HF tokenizers and tiktoken is
// bench/tokenizer/compare_tokenizers.py; this program is for profiling.
#include <cstdio>
#include <string_view>

#include <benchmark/benchmark.h>

#include "corpus_loader.h"
#include "tokenfeed/tokenizer.h"

namespace {

const tokenfeed::bench::Corpus& TheCorpus() {
  static tokenfeed::bench::Corpus c = tokenfeed::bench::LoadBenchCorpus();
  return c;
}

void BM_Encode(benchmark::State& state, const char* name, bool fast) {
  tokenfeed::TokenizerOptions opts;
  opts.fast_pretokenizers = fast;
  auto tok = tokenfeed::Tokenizer::FromFile(tokenfeed::bench::TokenizerPath(name), opts);
  if (!tok.ok()) {
    state.SkipWithError(tok.status().ToString().c_str());
    return;
  }
  const auto& corpus = TheCorpus();
  std::vector<tokenfeed::TokenId> ids;
  size_t tokens = 0;
  for (auto _ : state) {
    for (const std::string& d : corpus.docs) {
      ids.clear();
      (void)(*tok)->Encode(d, &ids);
      tokens += ids.size();
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * corpus.bytes));
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsRate);
  state.SetLabel(corpus.origin);
}

void BM_EncodeBatchAllCores(benchmark::State& state, const char* name) {
  auto tok = tokenfeed::Tokenizer::FromFile(tokenfeed::bench::TokenizerPath(name));
  if (!tok.ok()) {
    state.SkipWithError(tok.status().ToString().c_str());
    return;
  }
  const auto& corpus = TheCorpus();
  std::vector<std::string_view> views(corpus.docs.begin(), corpus.docs.end());
  std::vector<std::vector<tokenfeed::TokenId>> out;
  for (auto _ : state) {
    (void)(*tok)->EncodeBatch(views, &out);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * corpus.bytes));
  state.SetLabel(corpus.origin);
}

BENCHMARK_CAPTURE(BM_Encode, deepseek_v3_fast, "deepseek_v3", true)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Encode, deepseek_v3_general, "deepseek_v3", false)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Encode, llama3_fast, "llama3", true)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Encode, qwen3_fast, "qwen3", true)->Unit(benchmark::kMillisecond)->UseRealTime();
// SentencePiece-style: Llama-2 (no pre-tokenizer: one piece per document), Gemma 3.
BENCHMARK_CAPTURE(BM_Encode, llama2, "llama2", true)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Encode, gemma3, "gemma3", true)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_EncodeBatchAllCores, deepseek_v3, "deepseek_v3")->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
