// A fixed, deterministic encode run for instruction-level profiling:
//   valgrind --tool=callgrind --cache-sim=yes --toggle-collect='*EncodeAll*' encode_profile NAME
// Loads the benchmark corpus and the tokenizer NAME, then encodes every
// document once inside EncodeAll, so only the encoding is counted.
//   encode_profile NAME steady [WORD_CACHE_ENTRIES]
// first encodes the odd documents and the same with ASCII letters' case
// swapped (other text), outside EncodeAll, then the even ones inside it: the
// steady regime of bench/tokenizer/peer_regimes.py, for callgrind.
//   encode_profile NAME REPEATS [WORD_CACHE_ENTRIES [DOCS]]
// encodes the corpus REPEATS times and prints the fastest run's throughput,
// by wall clock and by the thread's CPU time (a quick check;
// bench/tokenizer/compare_tokenizers.py is the published comparison).
// DOCS keeps that many documents, spread evenly over the corpus: a small
// sample whose words fit in the CPU caches shows what the memory waits of
// the whole cost.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "corpus_loader.h"
#include "tokenfeed/tokenizer.h"

__attribute__((noinline)) size_t EncodeAll(const tokenfeed::Tokenizer& tok, const std::vector<std::string>& docs) {
  std::vector<tokenfeed::TokenId> ids;
  size_t total = 0;
  for (const std::string& d : docs) {
    ids.clear();
    (void)tok.Encode(d, &ids);
    total += ids.size();
  }
  return total;
}

// The same outside EncodeAll (callgrind's toggle does not count it).
__attribute__((noinline)) void WarmUp(const tokenfeed::Tokenizer& tok, const std::vector<std::string>& docs) {
  std::vector<tokenfeed::TokenId> ids;
  for (const std::string& d : docs) {
    ids.clear();
    (void)tok.Encode(d, &ids);
  }
}

int main(int argc, char** argv) {
  std::string name = argc > 1 ? argv[1] : "deepseek_v3";
  const bool steady = argc > 2 && std::string(argv[2]) == "steady";
  const int repeats = argc > 2 && !steady ? std::max(1, std::atoi(argv[2])) : 1;
  auto corpus = tokenfeed::bench::LoadBenchCorpus();
  tokenfeed::TokenizerOptions opts;
  if (argc > 3) opts.word_cache_entries = static_cast<size_t>(std::strtoull(argv[3], nullptr, 10));
  if (argc > 4) {
    const size_t keep = std::max<size_t>(1, std::strtoull(argv[4], nullptr, 10));
    if (keep < corpus.docs.size()) {
      const size_t stride = corpus.docs.size() / keep;
      std::vector<std::string> sample;
      corpus.bytes = 0;
      for (size_t i = 0; i < keep; ++i) {
        sample.push_back(std::move(corpus.docs[i * stride]));
        corpus.bytes += sample.back().size();
      }
      corpus.docs = std::move(sample);
    }
  }
  auto tok = tokenfeed::Tokenizer::FromFile(tokenfeed::bench::TokenizerPath(name), opts);
  if (!tok.ok()) {
    std::fprintf(stderr, "%s\n", tok.status().ToString().c_str());
    return 1;
  }
  // Wall-clock time, and the thread's CPU time, which a machine shared with
  // other work disturbs less.
  auto cpu_seconds = [] {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  };
  if (steady) {
    std::vector<std::string> warm, timed;
    for (size_t i = 0; i < corpus.docs.size(); ++i) (i % 2 ? warm : timed).push_back(corpus.docs[i]);
    const size_t odd = warm.size();
    for (size_t i = 0; i < odd; ++i) {
      std::string d = warm[i];
      for (char& c : d) {
        if (c >= 'a' && c <= 'z') {
          c = static_cast<char>(c - 'a' + 'A');
        } else if (c >= 'A' && c <= 'Z') {
          c = static_cast<char>(c - 'A' + 'a');
        }
      }
      warm.push_back(std::move(d));
    }
    WarmUp(**tok, warm);
    std::printf("steady: %zu documents timed, %zu tokens\n", timed.size(), EncodeAll(**tok, timed));
    return 0;
  }
  double best = 1e30, best_cpu = 1e30;
  size_t tokens = 0;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = cpu_seconds();
    tokens = EncodeAll(**tok, corpus.docs);
    best_cpu = std::min(best_cpu, cpu_seconds() - c0);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("%zu docs, %zu bytes, %zu tokens", corpus.docs.size(), corpus.bytes, tokens);
  const double mb = static_cast<double>(corpus.bytes) / 1e6;
  if (repeats > 1) {
    std::printf("; best of %d: %.1f MB/s (%.1f MB/s of CPU time)", repeats, mb / best, mb / best_cpu);
  } else {
    std::printf("; first sight: %.1f MB/s (%.1f MB/s of CPU time)", mb / best, mb / best_cpu);
  }
  std::printf("\n");
  return 0;
}
