// The scanners of DeepSeek-V3's three Split stages (fast_matchers.h):
//
//   digits  \p{N}{1,3}
//   cjk     [\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+
//   main    B1 [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+
//           B2 [^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+
//           B3  ?[\p{P}\p{S}]+[\r\n]*
//           B4 \s*[\r\n]+
//           B5 \s+(?!\S)
//           B6 \s+
//
// Why "main" matches Oniguruma: at a position the first alternative that
// matches wins, and each has a closed form by the class of the first one or
// two characters. B1 needs ASCII punctuation then an ASCII letter. B2 starts
// at a letter or mark (its optional prefix cannot take a letter, and taking a
// mark prefix ends where the run from the mark ends anyway), or at one
// character that is not CR, LF, L, P or S followed by a letter or mark. B3
// starts at P or S, or at a space followed by P or S. B4-B6:
// MatchWhiteSpaceTail (char_class_runs.h). Unlike the GPT-2 and Llama-3
// patterns, some characters start no match at all (a number, a control or
// format character such as U+200D, an unassigned code point, when no letter or
// mark follows); the search then moves on by one character, as Oniguruma does.
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "tokenizer/deepseek_scan.h"
#include "tokenizer/fast_matchers.h"
#include "tokenizer/split_matcher.h"
#include "tokenizer/unicode_class.h"

namespace tokenfeed::tokenizer {
namespace {

using namespace unicode;  // NOLINT: the class bits read better unqualified here

inline Span MakeSpan(const uint8_t* begin, const uint8_t* from, const uint8_t* to) {
  return Span{static_cast<uint32_t>(from - begin), static_cast<uint32_t>(to - begin)};
}

class DigitsScanner final : public SplitMatcher {
 public:
  // Hot path: most of the text is skipped, ASCII a byte at a time.
  void FindMatches(std::string_view text, std::vector<Span>* out) const override {
    const uint8_t* const begin = reinterpret_cast<const uint8_t*>(text.data());
    const uint8_t* const end = begin + text.size();
    const uint8_t* p = begin;
    while (p < end) {
      if (*p < 0x80 && (*p < '0' || *p > '9')) {
        ++p;
        continue;
      }
      CharInfo c = CharAt(p, end);
      if (!(c.mask & kNumber)) {
        p += c.len;
        continue;
      }
      const uint8_t* const start = p;
      p = deepseek::DigitGroupEnd(p, end, c.len);
      out->push_back(MakeSpan(begin, start, p));
    }
  }
  std::string_view name() const override { return "fast:deepseek-v3-digits"; }
};

// U+3040-U+30FF (E3 81 80 - E3 83 BF) and U+4E00-U+9FA5 (E4 B8 80 - E9 BE A5)
// are three-byte characters with a lead byte in E3-E9.
class CjkScanner final : public SplitMatcher {
 public:
  // Hot path: bytes outside E3-E9 cannot start a match.
  void FindMatches(std::string_view text, std::vector<Span>* out) const override {
    const uint8_t* const begin = reinterpret_cast<const uint8_t*>(text.data());
    const uint8_t* const end = begin + text.size();
    const uint8_t* p = begin;
    const uint8_t* run = nullptr;  // start of the current run, if any
    while (p < end) {
      char32_t cp = 0;
      uint32_t len = 1;
      if (*p >= 0xE3 && *p <= 0xE9) {
        len = DecodeMultibyteUtf8(p, end, &cp);
      } else if (*p >= 0x80) {
        len = DecodeMultibyteUtf8(p, end, &cp);
        cp = 0;
      }
      if (deepseek::IsCjk(cp)) {
        if (run == nullptr) run = p;
      } else if (run != nullptr) {
        out->push_back(MakeSpan(begin, run, p));
        run = nullptr;
      }
      p += len;
    }
    if (run != nullptr) out->push_back(MakeSpan(begin, run, end));
  }
  std::string_view name() const override { return "fast:deepseek-v3-cjk"; }
};

class MainScanner final : public SplitMatcher {
 public:
  void FindMatches(std::string_view text, std::vector<Span>* out) const override {
    const uint8_t* const begin = reinterpret_cast<const uint8_t*>(text.data());
    deepseek::ScanMain(begin, begin + text.size(),
                       [&](const uint8_t* from, const uint8_t* to) { out->push_back(MakeSpan(begin, from, to)); });
  }
  std::string_view name() const override { return "fast:deepseek-v3-main"; }
};

}  // namespace

std::unique_ptr<SplitMatcher> MakeDeepSeekV3DigitsScanner() { return std::make_unique<DigitsScanner>(); }
std::unique_ptr<SplitMatcher> MakeDeepSeekV3CjkScanner() { return std::make_unique<CjkScanner>(); }
std::unique_ptr<SplitMatcher> MakeDeepSeekV3MainScanner() { return std::make_unique<MainScanner>(); }

}  // namespace tokenfeed::tokenizer
