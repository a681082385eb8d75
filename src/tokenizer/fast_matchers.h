// The hand-written pre-tokenizer scanners, one per family of known pattern
// strings (GPT-2 ByteLevel; Llama-3, Qwen2, cl100k; DeepSeek-V3's three
// stages), each proven span-for-span identical to Oniguruma on its pattern by
// the differential tests and fuzz/pretokenizer_diff. Not a regex engine: a
// pattern not in KnownFastPatterns() has no scanner. Scanners hold no mutable
// state: any number of threads may share one.
#pragma once

#include <memory>
#include <span>
#include <string_view>

#include "tokenizer/split_matcher.h"

namespace tokenfeed::tokenizer {

// The pattern strings, as they read after tokenizer.json is decoded.
// DeepSeek-V3 stage 1: digits, three at a time.
inline constexpr std::string_view kDeepSeekV3DigitsPattern = R"(\p{N}{1,3})";
// DeepSeek-V3 stage 2: CJK ideographs, hiragana and katakana. The JSON holds
// the characters themselves (U+4E00-U+9FA5, U+3040-U+309F, U+30A0-U+30FF).
inline constexpr std::string_view kDeepSeekV3CjkPattern =
    "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+";
// DeepSeek-V3 stage 3. The JSON holds CR and LF themselves, not "\r" "\n".
inline constexpr std::string_view kDeepSeekV3MainPattern =
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+"
    "|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
    "| ?[\\p{P}\\p{S}]+[\r\n]*"
    "|\\s*[\r\n]+"
    "|\\s+(?!\\S)"
    "|\\s+";
inline constexpr std::string_view kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
inline constexpr std::string_view kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// tiktoken's cl100k_base, with its possessive quantifiers.
inline constexpr std::string_view kCl100kPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+)";

// One pattern string that has a scanner. Some scanners answer to more than
// one spelling of the same regex (CR written as "\r" or as the character).
struct FastPattern {
  std::string_view name;     // the scanner's name(), e.g. "fast:llama3"
  std::string_view pattern;  // exact pattern string
  std::unique_ptr<SplitMatcher> (*make)();
};

// Every pattern string that MakeFastMatcher recognises. To add a scanner, list
// its pattern string(s) here: the differential tests and the fuzzer iterate
// this list; testdata/make_split_golden.py must learn the pattern too.
std::span<const FastPattern> KnownFastPatterns();

// The scanner families (gpt2_scanner.cc, llama3_scanner.cc, deepseek_scanner.cc).
std::unique_ptr<SplitMatcher> MakeGpt2Scanner();
std::unique_ptr<SplitMatcher> MakeLlama3Scanner();  // \p{N}{1,3}
std::unique_ptr<SplitMatcher> MakeQwen2Scanner();   // \p{N}
std::unique_ptr<SplitMatcher> MakeCl100kScanner();
std::unique_ptr<SplitMatcher> MakeDeepSeekV3DigitsScanner();
std::unique_ptr<SplitMatcher> MakeDeepSeekV3CjkScanner();
std::unique_ptr<SplitMatcher> MakeDeepSeekV3MainScanner();

}  // namespace tokenfeed::tokenizer
