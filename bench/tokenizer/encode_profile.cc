// A fixed, deterministic encode run for instruction-level profiling:
//   valgrind --tool=callgrind --cache-sim=yes --toggle-collect='*EncodeAll*' encode_profile NAME
// Loads the benchmark corpus and the tokenizer NAME, then encodes every
// document once inside EncodeAll, so only the encoding is counted.
#include <cstdio>
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

int main(int argc, char** argv) {
  std::string name = argc > 1 ? argv[1] : "deepseek_v3";
  auto corpus = tokenfeed::bench::LoadBenchCorpus();
  auto tok = tokenfeed::Tokenizer::FromFile(tokenfeed::bench::TokenizerPath(name));
  if (!tok.ok()) {
    std::fprintf(stderr, "%s\n", tok.status().ToString().c_str());
    return 1;
  }
  size_t tokens = EncodeAll(**tok, corpus.docs);
  std::printf("%zu docs, %zu bytes, %zu tokens\n", corpus.docs.size(), corpus.bytes, tokens);
  return 0;
}
