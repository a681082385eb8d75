// SplitMatcher: finds the matches of one pre-tokenizer pattern (a Split
// regex, a Split string, the ByteLevel regex) inside one piece of text.
// The piece is the whole subject: anchors and look-arounds see only it, as in
// the reference, where each pre-tokenizer stage runs on the pieces the
// previous stage left. Input is always valid UTF-8 (the tokenizer repairs or
// rejects invalid bytes before this point).
// Matchers are immutable after construction: FindMatches may run on many
// threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenfeed/status.h"

namespace tokenfeed::tokenizer {

// A half-open byte range [begin, end) inside a piece.
struct Span {
  uint32_t begin;
  uint32_t end;
  friend bool operator==(const Span&, const Span&) = default;
};

class SplitMatcher {
 public:
  virtual ~SplitMatcher() = default;

  // Appends to `out`, in order, the successive non-overlapping matches of the
  // pattern in `text`, exactly as the reference's find_iter reports them
  // (Oniguruma, leftmost-first alternation). Empty matches are reported as
  // the reference reports them. `text.size()` is below 4 GiB.
  virtual void FindMatches(std::string_view text, std::vector<Span>* out) const = 0;

  // A short name for diagnostics and benchmarks: "onig", "fast:deepseek-v3-main", ...
  virtual std::string_view name() const = 0;
};

// The general path: any Oniguruma pattern, compiled as the reference compiles
// it (Oniguruma's default syntax, ONIG_SYNTAX_ONIGURUMA -- not Ruby's --,
// UTF-8, no options) and iterated as its find_iter does. Unlike the reference
// it sets no backtracking limit (regex_matcher.cc says why). A pattern that
// does not compile is an InvalidArgument error that quotes the pattern and
// Oniguruma's reason.
Result<std::unique_ptr<SplitMatcher>> MakeRegexMatcher(std::string_view pattern);

// A literal string (a Split pre-tokenizer with a "String" pattern): the
// leftmost non-overlapping occurrences. The empty string matches empty at
// every character boundary, end included, as in the reference (which runs the
// regex-escaped string through Oniguruma), so splitting on "" isolates every
// character.
std::unique_ptr<SplitMatcher> MakeLiteralMatcher(std::string_view literal);

// A hand-written scanner proven identical to MakeRegexMatcher(pattern), or
// null when `pattern` is not one of the known patterns (compared byte for byte
// after the JSON is decoded).
std::unique_ptr<SplitMatcher> MakeFastMatcher(std::string_view pattern);

// The fast scanner where there is one, the general path otherwise.
// `allow_fast` = false forces the general path (tests, benchmarks, and the
// --no-fast-pretokenizer switch).
Result<std::unique_ptr<SplitMatcher>> MakeSplitMatcher(std::string_view pattern, bool allow_fast = true);

// The regex of the ByteLevel pre-tokenizer (GPT-2's), as the reference has it.
inline constexpr std::string_view kByteLevelPattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

}  // namespace tokenfeed::tokenizer
