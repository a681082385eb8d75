#include "tokenizer/fast_matchers.h"

#include <array>

namespace tokenfeed::tokenizer {
namespace {

// The same regexes spelled the other way round: CR and LF as "\r" "\n" where
// the canonical form holds the characters, and the reverse; the CJK ranges as
// \uXXXX escapes. Oniguruma compiles each pair to the same program.
constexpr std::string_view kDeepSeekV3CjkEscaped = R"([\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+)";
constexpr std::string_view kDeepSeekV3MainEscaped =
    R"([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kLlama3Unescaped =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\r\n]*"
    "|\\s*[\r\n]+|\\s+(?!\\S)|\\s+";
constexpr std::string_view kQwen2Unescaped =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\r\n]*"
    "|\\s*[\r\n]+|\\s+(?!\\S)|\\s+";

constexpr std::array kFastPatterns = {
    FastPattern{"fast:gpt2", kByteLevelPattern, &MakeGpt2Scanner},
    FastPattern{"fast:llama3", kLlama3Pattern, &MakeLlama3Scanner},
    FastPattern{"fast:llama3", kLlama3Unescaped, &MakeLlama3Scanner},
    FastPattern{"fast:qwen2", kQwen2Pattern, &MakeQwen2Scanner},
    FastPattern{"fast:qwen2", kQwen2Unescaped, &MakeQwen2Scanner},
    FastPattern{"fast:cl100k", kCl100kPattern, &MakeCl100kScanner},
    FastPattern{"fast:deepseek-v3-digits", kDeepSeekV3DigitsPattern, &MakeDeepSeekV3DigitsScanner},
    FastPattern{"fast:deepseek-v3-cjk", kDeepSeekV3CjkPattern, &MakeDeepSeekV3CjkScanner},
    FastPattern{"fast:deepseek-v3-cjk", kDeepSeekV3CjkEscaped, &MakeDeepSeekV3CjkScanner},
    FastPattern{"fast:deepseek-v3-main", kDeepSeekV3MainPattern, &MakeDeepSeekV3MainScanner},
    FastPattern{"fast:deepseek-v3-main", kDeepSeekV3MainEscaped, &MakeDeepSeekV3MainScanner},
};

}  // namespace

std::span<const FastPattern> KnownFastPatterns() { return kFastPatterns; }

}  // namespace tokenfeed::tokenizer
