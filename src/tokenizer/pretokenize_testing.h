// Support for the tests, benchmarks and fuzzers of the pattern matchers:
// UTF-8 encoding of single code points, random text built from the code
// points where the patterns have edges, the built-in multilingual sample, and
// a reader for corpus directories of JSONL files (field "text").
// Test code only: never linked into the library. Plain functions; the random
// text takes the caller's generator, so runs are reproducible from a seed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenfeed/status.h"
#include "tokenizer/split_matcher.h"

namespace tokenfeed::tokenizer::testing {

// UTF-8 of one code point (no surrogates, at most U+10FFFF).
std::string EncodeUtf8(char32_t cp);

// Code points at the edges of the patterns' classes: every White_Space
// character, CR/LF, apostrophes and the letters that fold into contractions,
// combining marks, numbers of every kind, CJK range ends, ZWJ and emoji parts,
// private use and unassigned code points, ...
std::span<const char32_t> TrickyCodePoints();

// A valid UTF-8 string of `length` code points, drawn from TrickyCodePoints(),
// printable ASCII, and random code points of the BMP and of all planes.
std::string RandomText(std::mt19937_64& rng, size_t length);

// The built-in multilingual sample (testdata/pretokenizer_sample.txt): the
// whole file, then each of its lines. An error when the file is missing.
Result<std::vector<std::string>> BuiltinSampleDocuments();

// The "text" field of every line of every *.jsonl file in `dir`, files in
// name order, stopping once `max_bytes` of text are read. An error when the
// directory has no .jsonl file or a line does not parse.
Result<std::vector<std::string>> ReadJsonlCorpus(const std::string& dir, size_t max_bytes = SIZE_MAX);

// The corpus of TOKENFEED_CORPUS_DIR when that is set, else the built-in
// sample. `source` (if not null) receives a description for messages.
Result<std::vector<std::string>> CorpusOrSample(std::string* source, size_t max_bytes = SIZE_MAX);

// Character boundaries of valid UTF-8 `text`, 0 and text.size() included.
std::vector<uint32_t> CharBoundaries(std::string_view text);

// A readable rendering of spans for failure messages: [0,3)"abc" [3,4)" " ...
std::string DescribeSpans(std::string_view text, const std::vector<Span>& spans);

}  // namespace tokenfeed::tokenizer::testing
