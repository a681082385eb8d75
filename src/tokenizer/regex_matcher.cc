// The general path: any pattern, run by Oniguruma exactly as the reference
// runs it (see MakeRegexMatcher in split_matcher.h).
//
// What the reference does, and so what this does:
// - Compiles with onig_new(ONIG_OPTION_NONE, ONIG_ENCODING_UTF8,
//   OnigDefaultSyntax). The default syntax is ONIG_SYNTAX_ONIGURUMA, not
//   Ruby's (the two differ in \N, \O, (?W), variable-length look-behind...).
// - Iterates matches like the Rust onig crate's find_iter: search from the end
//   of the last match over the whole piece (look-arounds see all of it); an
//   empty match that ends where the previous match ended is skipped by moving
//   the search start one character on.
// - Keeps Oniguruma's default limit of 10,000,000 backtracks per match attempt,
//   set here explicitly (Oniguruma versions disagree on what 0 means). Past it
//   the reference fails the whole call (e.g. \s*[\r\n]+ over ten million
//   spaces); so does this, with a RegexSearchError.
// Two bounds the reference does not have, so that no document can hold a
// thread for hours ((a|aa)+$ grows about 6.7x per 4 bytes): at most
// kRetryLimitInSearch backtracks in one search call, and a time budget per
// piece of 1 s plus 1 s per MB (10x under the sanitizers, kBudgetScale),
// checked between search calls. Text the reference tokenizes in reasonable
// time stays far below both.
//
// A failed search throws RegexSearchError (split_matcher.h says why), with
// Oniguruma's own message and the pattern's origin; Tokenizer::Encode turns it
// into a Status.
//
// Thread safety: Oniguruma's search reads the compiled regex_t and writes only
// the region and the match state it is given; each thread has its own region
// and match parameters (thread_local below). onig_new is serialised, as the
// reference serialises it.
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include <oniguruma.h>

#include "tokenizer/split_matcher.h"
#include "tokenfeed/status.h"

namespace tokenfeed::tokenizer {
namespace {

// Oniguruma's own default per match attempt (ONIG_DEFAULT_RETRY_LIMIT_IN_MATCH),
// which the reference runs with.
constexpr unsigned long kRetryLimitInMatch = 10'000'000;
// Per search call (all start positions together); the reference has none.
constexpr unsigned long kRetryLimitInSearch = 200'000'000;
// Search calls between two looks at the clock.
constexpr unsigned kCallsPerClockCheck = 16;
// The time budget's multiplier. Under the sanitizers the bookkeeping of each
// match is instrumented and runs about 10x slower (a megabyte of single-digit
// matches: 0.25 s in a release build, 2.2 s under AddressSanitizer on a loaded
// 2-core machine), so there the budget is 10x too; a release build keeps 1x.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr int kBudgetScale = 10;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr int kBudgetScale = 10;
#else
constexpr int kBudgetScale = 1;
#endif
#else
constexpr int kBudgetScale = 1;
#endif

std::string OnigMessage(int code) {
  OnigUChar message[ONIG_MAX_ERROR_MESSAGE_LEN];
  const int n = onig_error_code_to_str(message, code);
  return std::string(reinterpret_cast<const char*>(message), n > 0 ? static_cast<size_t>(n) : 0);
}

std::mutex& OnigCompileMutex() {
  static std::mutex mu;
  return mu;
}

// Per-thread search state: Oniguruma's region and match parameters are
// heap objects; reusing them keeps FindMatches free of allocation.
class SearchScratch {
 public:
  SearchScratch() : region_(onig_region_new()), param_(onig_new_match_param()) {
    if (region_ == nullptr || param_ == nullptr) throw std::bad_alloc();
    onig_initialize_match_param(param_);
    onig_set_retry_limit_in_match_of_match_param(param_, kRetryLimitInMatch);
    onig_set_retry_limit_in_search_of_match_param(param_, kRetryLimitInSearch);
  }
  ~SearchScratch() {
    onig_region_free(region_, 1);
    onig_free_match_param(param_);
  }
  SearchScratch(const SearchScratch&) = delete;
  SearchScratch& operator=(const SearchScratch&) = delete;

  OnigRegion* region() { return region_; }
  OnigMatchParam* param() { return param_; }

 private:
  OnigRegion* region_;
  OnigMatchParam* param_;
};

SearchScratch& ThreadScratch() {
  thread_local SearchScratch scratch;
  return scratch;
}

// The document whose pieces this thread is searching (RegexDocumentBudget):
// its size, and when its first search started (0: not yet; steady_clock ticks).
thread_local size_t document_bytes = 0;
thread_local int64_t document_started = 0;
thread_local bool in_document = false;

// Length of the UTF-8 character that starts with byte b (1 for a stray byte).
inline size_t Utf8Length(uint8_t b) {
  if (b < 0xC0) return 1;
  if (b < 0xE0) return 2;
  if (b < 0xF0) return 3;
  return 4;
}

class OnigMatcher final : public SplitMatcher {
 public:
  OnigMatcher(regex_t* regex, std::string origin) : regex_(regex), origin_(std::move(origin)) {}
  ~OnigMatcher() override { onig_free(regex_); }
  OnigMatcher(const OnigMatcher&) = delete;
  OnigMatcher& operator=(const OnigMatcher&) = delete;

  void FindMatches(std::string_view text, std::vector<Span>* out) const override {
    SearchScratch& scratch = ThreadScratch();
    const auto* const str = reinterpret_cast<const OnigUChar*>(text.data());
    const auto* const str_end = str + text.size();
    size_t search_from = 0;
    bool have_last = false;
    size_t last_match_end = 0;
    using Clock = std::chrono::steady_clock;
    // ~1 s per MB of the document (or of this piece, outside a document).
    const size_t budget_bytes = in_document ? document_bytes : text.size();
    Clock::time_point started;
    if (in_document) {
      if (document_started == 0) document_started = Clock::now().time_since_epoch().count();
      started = Clock::time_point(Clock::duration(document_started));
    } else {
      started = Clock::now();
    }
    const auto budget = (std::chrono::seconds(1) + std::chrono::microseconds(budget_bytes)) * kBudgetScale;
    // The clock is read at the first call of a piece too, so that many small
    // pieces of one document cannot each run unchecked.
    unsigned calls = kCallsPerClockCheck - 1;
    while (search_from <= text.size()) {
      if (++calls % kCallsPerClockCheck == 0 && Clock::now() - started > budget) {
        throw RegexSearchError(origin_ + ": the regex search took more than " +
                               std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(budget).count()) +
                               " ms on " + (in_document ? "a document" : "a piece") + " of " +
                               std::to_string(budget_bytes) + " bytes (stopped at byte " + std::to_string(search_from) +
                               " of a piece of " + std::to_string(text.size()) +
                               " bytes); the pattern backtracks too much on this text");
      }
      onig_region_clear(scratch.region());
      const int r = onig_search_with_param(regex_, str, str_end, str + search_from, str_end, scratch.region(),
                                           ONIG_OPTION_NONE, scratch.param());
      if (r == ONIG_MISMATCH) break;
      if (r < 0) {
        throw RegexSearchError(origin_ + ": the regex search failed at byte " + std::to_string(search_from) +
                               " of a piece of " + std::to_string(text.size()) + " bytes: " + OnigMessage(r) +
                               (r == ONIGERR_RETRY_LIMIT_IN_MATCH_OVER || r == ONIGERR_RETRY_LIMIT_IN_SEARCH_OVER
                                    ? " (the pattern backtracks too much on this text; the reference tokenizer "
                                      "fails on it too past 10,000,000 backtracks)"
                                    : ""));
      }
      const auto begin = static_cast<size_t>(scratch.region()->beg[0]);
      const auto end = static_cast<size_t>(scratch.region()->end[0]);
      if (begin == end && have_last && last_match_end == end) {
        search_from += search_from < text.size() ? Utf8Length(str[search_from]) : 1;
        continue;
      }
      search_from = end;
      have_last = true;
      last_match_end = end;
      out->push_back(Span{static_cast<uint32_t>(begin), static_cast<uint32_t>(end)});
    }
  }

  std::string_view name() const override { return "onig"; }

 private:
  regex_t* regex_;
  std::string origin_;
};

}  // namespace

RegexDocumentBudget::RegexDocumentBudget(size_t bytes) noexcept
    : saved_bytes_(in_document ? document_bytes : SIZE_MAX), saved_started_(document_started) {
  in_document = true;
  document_bytes = bytes;
  document_started = 0;
}

RegexDocumentBudget::~RegexDocumentBudget() {
  in_document = saved_bytes_ != SIZE_MAX;
  document_bytes = in_document ? saved_bytes_ : 0;
  document_started = saved_started_;
}

Result<std::unique_ptr<SplitMatcher>> MakeRegexMatcher(std::string_view pattern, std::string_view origin) {
  std::lock_guard<std::mutex> lock(OnigCompileMutex());
  static const int init = [] {
    OnigEncoding encodings[] = {ONIG_ENCODING_UTF8};
    return onig_initialize(encodings, 1);
  }();
  if (init != ONIG_NORMAL) {
    return Status::Internal("Oniguruma failed to initialise (code " + std::to_string(init) + ")");
  }
  regex_t* regex = nullptr;
  OnigErrorInfo error_info{};
  const auto* p = reinterpret_cast<const OnigUChar*>(pattern.data());
  const int r = onig_new(&regex, p, p + pattern.size(), ONIG_OPTION_NONE, ONIG_ENCODING_UTF8,
                         ONIG_SYNTAX_ONIGURUMA, &error_info);
  if (r != ONIG_NORMAL) {
    OnigUChar message[ONIG_MAX_ERROR_MESSAGE_LEN];
    onig_error_code_to_str(message, r, &error_info);
    return Status::InvalidArgument("pre-tokenizer regex /" + std::string(pattern) +
                                   "/ does not compile: " + reinterpret_cast<const char*>(message) +
                                   "; fix the pattern in tokenizer.json (Oniguruma syntax)");
  }
  std::string where = origin.empty() ? "pre-tokenizer regex /" + std::string(pattern) + "/" : std::string(origin);
  return std::unique_ptr<SplitMatcher>(std::make_unique<OnigMatcher>(regex, std::move(where)));
}

}  // namespace tokenfeed::tokenizer
