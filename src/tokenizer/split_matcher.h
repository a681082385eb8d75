// SplitMatcher: finds the matches of one pre-tokenizer pattern (a Split
// regex, a Split string, the ByteLevel regex) inside one piece of text.
// The piece is the whole subject: anchors and look-arounds see only it, as in
// the reference, where each pre-tokenizer stage runs on the pieces the
// previous stage left. Input is always valid UTF-8 (the tokenizer repairs or
// rejects invalid bytes before this point).
// Matchers are immutable after construction: FindMatches may run on many
// threads at once.
// Failure: the hand-written scanners cannot fail. The general (Oniguruma)
// path can, on text that makes a pattern backtrack past its limits; it throws
// RegexSearchError, which Tokenizer::Encode catches and returns as a Status.
// This is the one exception inside the library, kept because a failed search
// sits under the pre-tokenizer's recursion and the normalizers on the hot path,
// where a Status at every level would cost every document for a case that
// almost never happens; it never crosses a public API.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
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

// A regex search that failed (a backtracking limit, the time budget, or
// another Oniguruma error). what() names the pattern's origin (the file and
// JSON path of the pattern when the tokenizer.json loader made the matcher),
// the byte offset, and Oniguruma's message.
class RegexSearchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The time budget of the general path covers a whole document, not each
// piece: a document split into many pieces (by special tokens or an earlier
// Split stage) cannot add piece budgets up. The encoder opens one scope per
// document on its thread; the budget is 1 s plus 1 s per MB of the document,
// counted from the document's first regex search. Without a scope (a matcher
// used on its own) each FindMatches call has a budget of its own.
class RegexDocumentBudget {
 public:
  explicit RegexDocumentBudget(size_t document_bytes) noexcept;
  ~RegexDocumentBudget();
  RegexDocumentBudget(const RegexDocumentBudget&) = delete;
  RegexDocumentBudget& operator=(const RegexDocumentBudget&) = delete;

 private:
  size_t saved_bytes_;
  int64_t saved_started_;
};

class SplitMatcher {
 public:
  virtual ~SplitMatcher() = default;

  // Appends to `out`, in order, the successive non-overlapping matches of the
  // pattern in `text`, exactly as the reference's find_iter reports them
  // (Oniguruma, leftmost-first alternation). Empty matches are reported as
  // the reference reports them. `text.size()` is below 4 GiB. Throws
  // RegexSearchError (general path only) when the search fails.
  virtual void FindMatches(std::string_view text, std::vector<Span>* out) const = 0;

  // For a scanner whose matches tile any text (each starts where the one
  // before ended, none is empty, the last ends at the text's end): appends
  // the matches to `pieces` as views into `text`, which are then also the
  // pieces an Isolated split gives, and returns true. That skips the spans
  // and the pass that turns them into pieces (the Llama-3 and GPT-2
  // scanners). Returns false, appending nothing, for any other matcher.
  virtual bool FindPieces(std::string_view text, std::vector<std::string_view>* pieces) const {
    (void)text;
    (void)pieces;
    return false;
  }

  // A short name for diagnostics and benchmarks: "onig", "fast:deepseek-v3-main", ...
  virtual std::string_view name() const = 0;
};

// The base of a hand-written scanner whose matches tile any text: Derived
// provides `static void Scan(std::string_view, OnMatch&& match)`, calling
// match(from, to) for each match in order; FindMatches and FindPieces
// are both made from it.
template <typename Derived>
class TilingScanner : public SplitMatcher {
 public:
  void FindMatches(std::string_view text, std::vector<Span>* out) const final {
    const auto* const begin = reinterpret_cast<const uint8_t*>(text.data());
    Derived::Scan(text, [&](const uint8_t* from, const uint8_t* to) {
      out->push_back(Span{static_cast<uint32_t>(from - begin), static_cast<uint32_t>(to - begin)});
    });
  }
  bool FindPieces(std::string_view text, std::vector<std::string_view>* pieces) const final {
    Derived::Scan(text, [&](const uint8_t* from, const uint8_t* to) {
      pieces->emplace_back(reinterpret_cast<const char*>(from), static_cast<size_t>(to - from));
    });
    return true;
  }
};

// The general path: any Oniguruma pattern, compiled as the reference compiles
// it (Oniguruma's default syntax, ONIG_SYNTAX_ONIGURUMA -- not Ruby's --,
// UTF-8, no options) and iterated as its find_iter does, with the reference's
// backtracking limit per match attempt and two further bounds on the time one
// piece may take (regex_matcher.cc). A pattern that does not compile is an
// InvalidArgument error that quotes the pattern and Oniguruma's reason.
// `origin` (e.g. "tokenizer.json: pre_tokenizer.pattern.Regex") is named in
// the errors of failed searches; empty: the pattern itself is.
Result<std::unique_ptr<SplitMatcher>> MakeRegexMatcher(std::string_view pattern, std::string_view origin = {});

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
Result<std::unique_ptr<SplitMatcher>> MakeSplitMatcher(std::string_view pattern, bool allow_fast = true,
                                                       std::string_view origin = {});

// The regex of the ByteLevel pre-tokenizer (GPT-2's), as the reference has it.
inline constexpr std::string_view kByteLevelPattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

}  // namespace tokenfeed::tokenizer
