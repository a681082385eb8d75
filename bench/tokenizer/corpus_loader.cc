#include "corpus_loader.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <simdjson.h>

namespace tokenfeed::bench {

Corpus LoadBenchCorpus() {
  Corpus c;
  std::filesystem::path dir;
  if (const char* env = std::getenv("TOKENFEED_CORPUS_DIR")) {
    dir = env;
  } else {
    dir = std::filesystem::path(TOKENFEED_SOURCE_DIR) / ".." / "shared" / "corpus";
  }
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  if (std::filesystem::is_directory(dir, ec)) {
    for (auto& e : std::filesystem::directory_iterator(dir)) {
      if (e.path().extension() == ".jsonl") files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  simdjson::dom::parser parser;
  for (auto& f : files) {
    std::ifstream in(f);
    std::string line;
    while (std::getline(in, line)) {
      simdjson::dom::element doc;
      std::string_view text;
      if (parser.parse(line).get(doc) || doc["text"].get(text)) continue;
      c.docs.emplace_back(text);
      c.bytes += text.size();
    }
  }
  if (!c.docs.empty()) {
    c.origin = dir.string() + " (" + std::to_string(files.size()) + " files)";
    return c;
  }
  static const char* kSample[] = {
      "The quick brown fox jumps over the lazy dog. It's 2024, and we'll see 3.14159 apples.\n",
      "数据管道的效率直接影响到整体训练速度和资源利用率。一个高效的数据管道能够确保GPU持续处于高负载状态。",
      "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。カタカナもある。",
      "한국어 문장도 포함됩니다. 데이터 파이프라인은 중요합니다!",
      "Привет, мир! Это пример текста на русском языке. 42 — ответ.",
      "مرحبا بالعالم، هذا نص عربي للاختبار.",
      "def f(x):\n    return {'a': [1, 2, 3], \"b\": x ** 2}  # comment\n\n\tif x:\n\t\tpass\n",
      "Ünïcödé façade — naïve café; emoji 👩‍👩‍👧 🎉 and spaces   \u00a0 here\u3000there\r\n",
  };
  while (c.bytes < (4 << 20)) {
    for (const char* s : kSample) {
      c.docs.emplace_back(s);
      c.bytes += c.docs.back().size();
    }
  }
  c.origin = "built-in sample";
  return c;
}

std::string TokenizerPath(const std::string& name) {
  if (const char* env = std::getenv("TOKENFEED_TOKENIZERS_DIR")) return std::string(env) + "/" + name + "/tokenizer.json";
  return std::string(TOKENFEED_SOURCE_DIR) + "/.cache/tokenizers/" + name + "/tokenizer.json";
}

}  // namespace tokenfeed::bench
