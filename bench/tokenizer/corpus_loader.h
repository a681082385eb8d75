// Loads the benchmark text: every "text" field of the JSONL files in
// $TOKENFEED_CORPUS_DIR (default ../shared/corpus next to the checkout), or,
// when there is none, a built-in multilingual sample repeated to ~4 MB.
#pragma once

#include <string>
#include <vector>

namespace tokenfeed::bench {

struct Corpus {
  std::vector<std::string> docs;
  size_t bytes = 0;
  std::string origin;
};

Corpus LoadBenchCorpus();
std::string TokenizerPath(const std::string& name);  // .cache/tokenizers/NAME/tokenizer.json

}  // namespace tokenfeed::bench
