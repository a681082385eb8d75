// The matcher of a Split pre-tokenizer with a "String" pattern. The reference
// compiles the regex-escaped string with Oniguruma and iterates it like any
// regex (split_matcher.h), which for a non-empty literal means the leftmost
// non-overlapping occurrences, and for the empty literal an empty match at
// every character boundary, end included (find_iter's empty-match rule).
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/split_matcher.h"

namespace tokenfeed::tokenizer {
namespace {

class LiteralMatcher final : public SplitMatcher {
 public:
  explicit LiteralMatcher(std::string_view literal) : literal_(literal) {}

  void FindMatches(std::string_view text, std::vector<Span>* out) const override {
    if (literal_.empty()) {
      for (size_t i = 0; i < text.size(); ++i) {
        if ((static_cast<uint8_t>(text[i]) & 0xC0) != 0x80) out->push_back(Span{uint32_t(i), uint32_t(i)});
      }
      out->push_back(Span{uint32_t(text.size()), uint32_t(text.size())});
      return;
    }
    size_t from = 0;
    while (from + literal_.size() <= text.size()) {
      const void* hit = memmem(text.data() + from, text.size() - from, literal_.data(), literal_.size());
      if (hit == nullptr) break;
      const size_t at = static_cast<size_t>(static_cast<const char*>(hit) - text.data());
      out->push_back(Span{uint32_t(at), uint32_t(at + literal_.size())});
      from = at + literal_.size();
    }
  }

  std::string_view name() const override { return "literal"; }

 private:
  std::string literal_;
};

}  // namespace

std::unique_ptr<SplitMatcher> MakeLiteralMatcher(std::string_view literal) {
  return std::make_unique<LiteralMatcher>(literal);
}

}  // namespace tokenfeed::tokenizer
