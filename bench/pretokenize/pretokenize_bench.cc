// MB/s of every fast pre-tokenizer scanner and of the Oniguruma path on the
// same pattern and text, then a side-by-side table. The text is the JSONL
// corpus in TOKENFEED_CORPUS_DIR (field "text"), or the built-in multilingual
// sample. Whole documents for every scanner, plus DeepSeek-V3's three stages
// chained as the reference chains them (each stage on the previous pieces) and
// fused into the one pass the tokenizer runs.
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "tokenizer/deepseek_pretokenizer.h"
#include "tokenizer/fast_matchers.h"
#include "tokenizer/pretokenize_testing.h"
#include "tokenizer/split_matcher.h"

namespace {

using tokenfeed::tokenizer::FastPattern;
using tokenfeed::tokenizer::KnownFastPatterns;
using tokenfeed::tokenizer::MakeFastMatcher;
using tokenfeed::tokenizer::MakeRegexMatcher;
using tokenfeed::tokenizer::Span;
using tokenfeed::tokenizer::SplitMatcher;

std::vector<std::string>* g_docs = nullptr;
size_t g_bytes = 0;

void RunOnDocs(benchmark::State& state, const SplitMatcher& matcher) {
  std::vector<Span> spans;
  size_t matches = 0;
  for (auto _ : state) {
    matches = 0;
    for (const std::string& doc : *g_docs) {
      spans.clear();
      matcher.FindMatches(doc, &spans);
      matches += spans.size();
    }
    benchmark::DoNotOptimize(spans.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * g_bytes));
  state.counters["matches"] = static_cast<double>(matches);
}

// The three DeepSeek-V3 Split stages, each on the pieces the previous left
// ("Isolated": matches and the gaps between them).
void RunDeepSeekStages(benchmark::State& state, const std::vector<std::unique_ptr<SplitMatcher>>& stages) {
  std::vector<Span> spans;
  std::vector<std::string_view> pieces;
  std::vector<std::string_view> next;
  for (auto _ : state) {
    for (const std::string& doc : *g_docs) {
      pieces.assign(1, doc);
      for (const auto& stage : stages) {
        next.clear();
        for (std::string_view piece : pieces) {
          spans.clear();
          stage->FindMatches(piece, &spans);
          uint32_t prev = 0;
          for (const Span& m : spans) {
            if (m.begin > prev) next.push_back(piece.substr(prev, m.begin - prev));
            if (m.end > m.begin) next.push_back(piece.substr(m.begin, m.end - m.begin));
            prev = m.end;
          }
          if (prev < piece.size()) next.push_back(piece.substr(prev));
        }
        pieces.swap(next);
      }
      benchmark::DoNotOptimize(pieces.data());
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * g_bytes));
}

// The same three stages in the fused one-pass version the tokenizer runs.
void RunDeepSeekFused(benchmark::State& state) {
  std::vector<std::string_view> pieces;
  for (auto _ : state) {
    for (const std::string& doc : *g_docs) {
      pieces.clear();
      tokenfeed::tokenizer::SplitDeepSeekV3(doc, &pieces);
      benchmark::DoNotOptimize(pieces.data());
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * g_bytes));
}

// Prints the usual console output, then MB/s of fast and onig side by side.
class SideBySideReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.error_occurred || run.run_type != Run::RT_Iteration) continue;
      const std::string name = run.benchmark_name();
      const size_t slash = name.find('/');
      if (slash == std::string::npos) continue;
      const auto it = run.counters.find("bytes_per_second");
      if (it == run.counters.end()) continue;
      const double mb_per_s = it->second.value / 1e6;
      rows_[name.substr(slash + 1)][name.substr(0, slash)] = mb_per_s;
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    std::printf("\n%-28s %12s %12s %9s %12s\n", "pattern", "fast MB/s", "onig MB/s", "speed-up", "fused MB/s");
    for (const auto& [pattern, by_engine] : rows_) {
      auto cell = [&](const char* engine) {
        const auto it = by_engine.find(engine);
        char buf[32];
        if (it == by_engine.end()) return std::string("-");
        std::snprintf(buf, sizeof buf, "%.1f", it->second);
        return std::string(buf);
      };
      std::string ratio = "-";
      if (by_engine.count("fast") && by_engine.count("onig") && by_engine.at("onig") > 0) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.1fx", by_engine.at("fast") / by_engine.at("onig"));
        ratio = buf;
      }
      std::printf("%-28s %12s %12s %9s %12s\n", pattern.c_str(), cell("fast").c_str(), cell("onig").c_str(),
                  ratio.c_str(), cell("fused").c_str());
    }
  }

 private:
  std::map<std::string, std::map<std::string, double>> rows_;
};

}  // namespace

int main(int argc, char** argv) {
  std::string source;
  auto docs = tokenfeed::tokenizer::testing::CorpusOrSample(&source);
  if (!docs.ok()) {
    std::fprintf(stderr, "pretokenize_bench: %s\n", docs.status().ToString().c_str());
    return 1;
  }
  g_docs = new std::vector<std::string>(std::move(*docs));
  for (const std::string& d : *g_docs) g_bytes += d.size();
  std::printf("pretokenize_bench: %s: %zu documents, %.2f MB\n", source.c_str(), g_docs->size(), g_bytes / 1e6);

  static std::vector<std::unique_ptr<SplitMatcher>> keep;
  std::set<std::string_view> seen;
  for (const FastPattern& known : KnownFastPatterns()) {
    if (!seen.insert(known.name).second) continue;  // a respelling of a pattern done already
    auto onig = MakeRegexMatcher(known.pattern);
    if (!onig.ok()) {
      std::fprintf(stderr, "pretokenize_bench: %s\n", onig.status().ToString().c_str());
      return 1;
    }
    keep.push_back(known.make());
    const SplitMatcher* fast = keep.back().get();
    keep.push_back(std::move(*onig));
    const SplitMatcher* general = keep.back().get();
    const std::string label(known.name.substr(known.name.find(':') + 1));
    benchmark::RegisterBenchmark(("fast/" + label).c_str(), [fast](benchmark::State& s) { RunOnDocs(s, *fast); })
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("onig/" + label).c_str(), [general](benchmark::State& s) { RunOnDocs(s, *general); })
        ->Unit(benchmark::kMillisecond);
  }

  static std::vector<std::unique_ptr<SplitMatcher>> ds_fast;
  static std::vector<std::unique_ptr<SplitMatcher>> ds_onig;
  for (std::string_view p : {tokenfeed::tokenizer::kDeepSeekV3DigitsPattern, tokenfeed::tokenizer::kDeepSeekV3CjkPattern,
                             tokenfeed::tokenizer::kDeepSeekV3MainPattern}) {
    ds_fast.push_back(MakeFastMatcher(p));
    ds_onig.push_back(std::move(*MakeRegexMatcher(p)));
  }
  benchmark::RegisterBenchmark("fast/deepseek-v3 (3 stages)", [](benchmark::State& s) { RunDeepSeekStages(s, ds_fast); })
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("onig/deepseek-v3 (3 stages)", [](benchmark::State& s) { RunDeepSeekStages(s, ds_onig); })
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("fused/deepseek-v3 (3 stages)", RunDeepSeekFused)->Unit(benchmark::kMillisecond);

  benchmark::Initialize(&argc, argv);
  SideBySideReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
