// Throughput of the text component on one JSONL corpus in three encodings.
//   text_read_bench [--corpus=GLOB_DIR] [--megabytes=N] [benchmark flags]
// The corpus is the *.jsonl files of /work/shared/corpus when present (real
// multilingual text), else generated; it is repeated up to N MB (default
// 256) and written plain, .zst (level 3) and .gz (level 6) to a temporary
// directory, so the runs read from the page cache: this measures the CPU
// cost of reading, not the disk.
#include <benchmark/benchmark.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "text/byte_source.h"
#include "text/cleaner.h"
#include "text/content_dedup.h"
#include "text/document_reader.h"
#include "text/line_window.h"

namespace tf = tokenfeed::text;
namespace fs = std::filesystem;

namespace {

struct Inputs {
  std::string dir;
  std::string plain, zst, gz;
  size_t bytes = 0;
  std::vector<std::string> documents;  // a sample of the texts, for the cleaning benchmarks
  std::string source;                  // what the corpus is, for the report
};
Inputs g_inputs;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "text_read_bench: %s\n", what.c_str());
  std::exit(2);
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) Die("cannot write " + path);
}

std::string Gzip(const std::string& in) {
  z_stream s{};
  if (deflateInit2(&s, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) Die("deflateInit2");
  std::string out(deflateBound(&s, in.size()), '\0');
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  s.avail_in = static_cast<uInt>(in.size());
  s.next_out = reinterpret_cast<Bytef*>(out.data());
  s.avail_out = static_cast<uInt>(out.size());
  if (deflate(&s, Z_FINISH) != Z_STREAM_END) Die("deflate");
  out.resize(s.total_out);
  deflateEnd(&s);
  return out;
}

std::string Zstd(const std::string& in) {
  std::string out(ZSTD_compressBound(in.size()), '\0');
  size_t n = ZSTD_compress(out.data(), out.size(), in.data(), in.size(), 3);
  if (ZSTD_isError(n)) Die(ZSTD_getErrorName(n));
  out.resize(n);
  return out;
}

void Prepare(const std::string& corpus_dir, size_t megabytes) {
  std::string corpus;
  std::vector<std::string> files;
  std::error_code ec;
  if (fs::is_directory(corpus_dir, ec)) {
    for (const auto& e : fs::directory_iterator(corpus_dir, ec)) {
      if (e.path().extension() == ".jsonl") files.push_back(e.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  for (const std::string& f : files) corpus += ReadWholeFile(f);
  if (corpus.empty()) {
    for (int i = 0; i < 20000; ++i) {
      corpus += "{\"text\":\"Synthetic document " + std::to_string(i) +
                ": the quick brown fox jumps over the lazy dog. Grüße, мир, 世界.\\n" +
                std::string(static_cast<size_t>(i % 700), 'x') + "\",\"source\":\"generated\"}\n";
    }
    g_inputs.source = "generated JSONL";
  } else {
    g_inputs.source = std::to_string(files.size()) + " files of " + corpus_dir;
  }
  std::string data;
  const size_t target = megabytes << 20;
  data.reserve(target + corpus.size());
  while (data.size() < target) data += corpus;
  g_inputs.bytes = data.size();

  char pattern[] = "/tmp/tokenfeed-text-bench-XXXXXX";
  if (::mkdtemp(pattern) == nullptr) Die("mkdtemp");
  g_inputs.dir = pattern;
  g_inputs.plain = g_inputs.dir + "/corpus.jsonl";
  g_inputs.zst = g_inputs.dir + "/corpus.jsonl.zst";
  g_inputs.gz = g_inputs.dir + "/corpus.jsonl.gz";
  WriteFile(g_inputs.plain, data);
  WriteFile(g_inputs.zst, Zstd(data));
  WriteFile(g_inputs.gz, Gzip(data));

  // Texts for the cleaning benchmarks: the first ~32 MB of documents.
  auto reader = tf::DocumentReader::Open(tf::SourceSet::FromPaths({g_inputs.plain}), {});
  if (!reader.ok()) Die(reader.status().ToString());
  size_t held = 0;
  while (held < (size_t{32} << 20)) {
    auto ev = (*reader)->Next();
    if (!ev.ok() || *ev == tf::ReadEvent::kEnd) break;
    if (*ev != tf::ReadEvent::kDocument) continue;
    g_inputs.documents.emplace_back((*reader)->document().text);
    held += g_inputs.documents.back().size();
  }
}

// LF splitting only: what the reader does before any JSON parsing.
void SplitLines(benchmark::State& state, const std::string& path) {
  size_t lines = 0;
  for (auto _ : state) {
    auto source = tf::ByteSource::Open(path);
    if (!source.ok()) Die(source.status().ToString());
    tf::LineWindow window(source->get(), 64u << 20, 1u << 20);
    tf::Line line;
    for (;;) {
      auto got = window.Next(&line);
      if (!got.ok()) Die(got.status().ToString());
      if (!*got) break;
      benchmark::DoNotOptimize(line.text.data());
      ++lines;
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * g_inputs.bytes));
  state.counters["lines/s"] = benchmark::Counter(static_cast<double>(lines), benchmark::Counter::kIsRate);
}

// Documents with positions: splitting, UTF-8 check and the JSON parse.
void ReadDocuments(benchmark::State& state, const std::string& path) {
  size_t docs = 0;
  for (auto _ : state) {
    auto reader = tf::DocumentReader::Open(tf::SourceSet::FromPaths({path}), {});
    if (!reader.ok()) Die(reader.status().ToString());
    for (;;) {
      auto ev = (*reader)->Next();
      if (!ev.ok()) Die(ev.status().ToString());
      if (*ev == tf::ReadEvent::kEnd) break;
      if (*ev == tf::ReadEvent::kDocument) {
        benchmark::DoNotOptimize((*reader)->document().text.data());
        ++docs;
      }
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * g_inputs.bytes));
  state.counters["docs/s"] = benchmark::Counter(static_cast<double>(docs), benchmark::Counter::kIsRate);
}

void BM_SplitLinesPlain(benchmark::State& s) { SplitLines(s, g_inputs.plain); }
void BM_SplitLinesZstd(benchmark::State& s) { SplitLines(s, g_inputs.zst); }
void BM_SplitLinesGzip(benchmark::State& s) { SplitLines(s, g_inputs.gz); }
void BM_ReadJsonlPlain(benchmark::State& s) { ReadDocuments(s, g_inputs.plain); }
void BM_ReadJsonlZstd(benchmark::State& s) { ReadDocuments(s, g_inputs.zst); }
void BM_ReadJsonlGzip(benchmark::State& s) { ReadDocuments(s, g_inputs.gz); }

void BM_Clean(benchmark::State& state) {
  auto cleaner = tf::Cleaner::Create({});
  std::string scratch;
  tf::CleaningStats stats;
  size_t bytes = 0, copied = 0;
  for (auto _ : state) {
    for (const std::string& d : g_inputs.documents) {
      tf::CleanResult r = cleaner->Clean(d, &scratch, &stats);
      benchmark::DoNotOptimize(r.text.data());
      copied += r.kept && r.text.data() >= scratch.data() && r.text.data() < scratch.data() + scratch.size();
      bytes += d.size();
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  double docs = static_cast<double>(std::max<uint64_t>(stats.documents, 1));
  state.counters["changed"] = static_cast<double>(stats.changed) / docs;  // trimmed or copied
  state.counters["copied"] = static_cast<double>(copied) / docs;
}

void BM_HashAndDedup(benchmark::State& state) {
  size_t bytes = 0;
  for (auto _ : state) {
    tf::DedupSet set;
    for (const std::string& d : g_inputs.documents) {
      benchmark::DoNotOptimize(set.Admit(tf::HashContent(d)));
      bytes += d.size();
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}

}  // namespace

int main(int argc, char** argv) {
  std::string corpus_dir = "/work/shared/corpus";
  size_t megabytes = 256;
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--corpus=", 0) == 0) {
      corpus_dir = a.substr(9);
    } else if (a.rfind("--megabytes=", 0) == 0) {
      megabytes = std::stoul(a.substr(12));
    } else {
      rest.push_back(argv[i]);
    }
  }
  Prepare(corpus_dir, megabytes);
  std::fprintf(stderr, "input: %s, repeated to %.1f MB; .zst %.1f MB, .gz %.1f MB\n", g_inputs.source.c_str(),
               static_cast<double>(g_inputs.bytes) / 1e6, static_cast<double>(fs::file_size(g_inputs.zst)) / 1e6,
               static_cast<double>(fs::file_size(g_inputs.gz)) / 1e6);
  benchmark::RegisterBenchmark("SplitLines/plain", BM_SplitLinesPlain)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("SplitLines/zstd", BM_SplitLinesZstd)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("SplitLines/gzip", BM_SplitLinesGzip)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("ReadJsonl/plain", BM_ReadJsonlPlain)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("ReadJsonl/zstd", BM_ReadJsonlZstd)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("ReadJsonl/gzip", BM_ReadJsonlGzip)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("Clean", BM_Clean)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("HashAndDedup", BM_HashAndDedup)->Unit(benchmark::kMillisecond);
  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::error_code ec;
  fs::remove_all(g_inputs.dir, ec);
  return 0;
}
