#include "tokenizer/split_matcher.h"

#include "tokenizer/fast_matchers.h"

namespace tokenfeed::tokenizer {

std::unique_ptr<SplitMatcher> MakeFastMatcher(std::string_view pattern) {
  for (const FastPattern& known : KnownFastPatterns()) {
    if (known.pattern == pattern) return known.make();
  }
  return nullptr;
}

Result<std::unique_ptr<SplitMatcher>> MakeSplitMatcher(std::string_view pattern, bool allow_fast,
                                                       std::string_view origin) {
  if (allow_fast) {
    if (std::unique_ptr<SplitMatcher> fast = MakeFastMatcher(pattern)) return fast;
  }
  return MakeRegexMatcher(pattern, origin);
}

}  // namespace tokenfeed::tokenizer
