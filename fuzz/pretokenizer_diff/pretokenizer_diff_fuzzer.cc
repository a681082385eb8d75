// Differential fuzzer: every fast pre-tokenizer scanner against Oniguruma on
// the same pattern. Aborts, printing both span lists, at the first input where
// they differ. The input bytes become valid UTF-8 first: valid sequences are
// kept, and each byte that does not start one is replaced by a code point
// from a table of characters where the patterns have edges (so one byte can
// reach a tricky character). Each scanner sees the whole text, its first and
// last few sub-pieces, and DeepSeek-V3's later stages see the pieces the
// earlier stages cut, which the fused one-pass version must reproduce. A
// scanner whose FindPieces answers (the tiling ones) must give exactly
// Oniguruma's matches as views into the text.
// TOKENFEED_FUZZ_SCANNER=<name> (e.g. fast:llama3) restricts the run to one.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/deepseek_pretokenizer.h"
#include "tokenizer/fast_matchers.h"
#include "tokenizer/split_matcher.h"

namespace {

using tokenfeed::tokenizer::FastPattern;
using tokenfeed::tokenizer::KnownFastPatterns;
using tokenfeed::tokenizer::MakeRegexMatcher;
using tokenfeed::tokenizer::Span;
using tokenfeed::tokenizer::SplitMatcher;

constexpr char32_t kReplacements[] = {
    0x09,   0x0A,   0x0D,   0x20,   0x85,   0xA0,    0x1680,  0x2000,  0x2028, 0x2029, 0x202F, 0x205F,
    0x3000, 0x180E, 0x200B, 0x200D, 0xFEFF, 0x017F,  0x212A,  0x0130,  0x00DF, 0x2019, 0x0301, 0x0903,
    0x20DD, 0xFE0F, 0x0660, 0x00B2, 0x2160, 0xFF10,  0x1D7CE, 0x4E00,  0x9FA5, 0x9FA6, 0x3040, 0x303F,
    0x309F, 0x30A0, 0x30FF, 0x3100, 0x3005, 0x3001,  0xAC00,  0x20000, 0x00E9, 0x01C5, 0x02B0, 0x05D0,
    0x1C89, 0x00A9, 0x2764, 0x1F600, 0x1F3FB, 0x1F1FA, 0x00BF, 0x2014, 0xE000, 0x10FFFF, 0x0378, 0xFFFD,
    0x00AD, 0x0000, 0x007F, 0x0E31,
};

void AppendUtf8(char32_t cp, std::string* out) {
  if (cp < 0x80) {
    *out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    *out += static_cast<char>(0xC0 | (cp >> 6));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *out += static_cast<char>(0xE0 | (cp >> 12));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    *out += static_cast<char>(0xF0 | (cp >> 18));
    *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Length of the valid UTF-8 sequence at data[i], or 0 when there is none.
size_t ValidSequenceLength(const uint8_t* data, size_t size, size_t i) {
  const uint8_t b0 = data[i];
  if (b0 < 0x80) return 1;
  size_t len;
  char32_t cp;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
    cp = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    cp = b0 & 0x0F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    cp = b0 & 0x07;
  } else {
    return 0;
  }
  if (i + len > size) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((data[i + k] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (data[i + k] & 0x3F);
  }
  const char32_t min = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

std::string ToValidUtf8(const uint8_t* data, size_t size) {
  std::string text;
  for (size_t i = 0; i < size;) {
    const size_t len = ValidSequenceLength(data, size, i);
    if (len == 0) {
      AppendUtf8(kReplacements[data[i] % std::size(kReplacements)], &text);
      ++i;
    } else {
      text.append(reinterpret_cast<const char*>(data + i), len);
      i += len;
    }
  }
  return text;
}

struct Pair {
  std::string_view name;
  std::string_view pattern;
  std::unique_ptr<SplitMatcher> fast;
  std::unique_ptr<SplitMatcher> onig;
};

std::vector<Pair>* MakePairs() {
  auto* pairs = new std::vector<Pair>;
  const char* only = std::getenv("TOKENFEED_FUZZ_SCANNER");
  std::set<std::string_view> seen;
  for (const FastPattern& known : KnownFastPatterns()) {
    if (only != nullptr && known.name != only) continue;
    if (!seen.insert(known.name).second) continue;  // a respelling of a pattern done already
    auto onig = MakeRegexMatcher(known.pattern);
    if (!onig.ok()) {
      std::fprintf(stderr, "pretokenizer_diff: %s\n", onig.status().ToString().c_str());
      std::abort();
    }
    pairs->push_back(Pair{known.name, known.pattern, known.make(), std::move(*onig)});
  }
  if (pairs->empty()) {
    std::fprintf(stderr, "pretokenizer_diff: no scanner named \"%s\"\n", only);
    std::abort();
  }
  return pairs;
}

void PrintSpans(const char* label, std::string_view text, const std::vector<Span>& spans) {
  std::fprintf(stderr, "%s:", label);
  for (const Span& s : spans) {
    std::fprintf(stderr, " [%u,%u)", s.begin, s.end);
    if (s.begin <= s.end && s.end <= text.size()) {
      std::fputc('"', stderr);
      for (char c : text.substr(s.begin, s.end - s.begin)) {
        const auto u = static_cast<unsigned char>(c);
        if (u >= 0x20 && u < 0x7F) {
          std::fputc(c, stderr);
        } else {
          std::fprintf(stderr, "\\x%02X", u);
        }
      }
      std::fputc('"', stderr);
    }
  }
  std::fputc('\n', stderr);
}

// Returns onig's spans; aborts when the fast scanner disagrees.
std::vector<Span> Check(const Pair& pair, std::string_view text) {
  std::vector<Span> want;
  std::vector<Span> got;
  pair.onig->FindMatches(text, &want);
  pair.fast->FindMatches(text, &got);
  if (got != want) {
    std::fprintf(stderr, "pretokenizer_diff: %.*s differs from Oniguruma on %zu bytes\n",
                 static_cast<int>(pair.name.size()), pair.name.data(), text.size());
    PrintSpans("fast", text, got);
    PrintSpans("onig", text, want);
    std::abort();
  }
  // A tiling scanner's pieces are its matches as views into the text, and
  // those matches tile the text (each non-empty, starting where the one
  // before ended, the last ending at its end): the pieces are then an
  // Isolated split's, as the pre-tokenizer takes them. Any other matcher
  // appends none.
  std::vector<std::string_view> pieces;
  const bool tiles = pair.fast->FindPieces(text, &pieces);
  bool same = tiles ? pieces.size() == want.size() : pieces.empty();
  uint32_t tiled_to = 0;
  for (size_t i = 0; tiles && same && i < pieces.size(); ++i) {
    same = pieces[i].data() == text.data() + want[i].begin && pieces[i].size() == want[i].end - want[i].begin &&
           want[i].begin == tiled_to && want[i].end > want[i].begin;
    tiled_to = want[i].end;
  }
  if (tiles && same && tiled_to != text.size()) same = false;
  if (!same) {
    std::vector<Span> as_spans;
    for (std::string_view piece : pieces) {
      const auto from = static_cast<uint32_t>(piece.data() - text.data());
      as_spans.push_back({from, from + static_cast<uint32_t>(piece.size())});
    }
    std::fprintf(stderr,
                 "pretokenizer_diff: %.*s's pieces (FindPieces returned %s) are not its matches tiling %zu bytes\n",
                 static_cast<int>(pair.name.size()), pair.name.data(), tiles ? "true" : "false", text.size());
    PrintSpans("pieces", text, as_spans);
    PrintSpans("onig", text, want);
    std::abort();
  }
  return want;
}

std::vector<size_t> CharStarts(std::string_view text) {
  std::vector<size_t> b;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<uint8_t>(text[i]) & 0xC0) != 0x80) b.push_back(i);
  }
  b.push_back(text.size());
  return b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<Pair>* pairs = MakePairs();
  if (size > (1 << 16)) return 0;  // long inputs add time, not coverage
  const std::string text = ToValidUtf8(data, size);
  const std::vector<size_t> b = CharStarts(text);
  const size_t n = b.size() - 1;  // characters
  for (const Pair& pair : *pairs) {
    Check(pair, text);
    for (size_t k = 1; k <= 3 && k < n; ++k) {
      Check(pair, std::string_view(text).substr(b[k]));
      Check(pair, std::string_view(text).substr(0, b[n - k]));
      Check(pair, std::string_view(text).substr(b[k], b[n - k] > b[k] ? b[n - k] - b[k] : 0));
    }
  }
  // DeepSeek-V3's stages on the pieces of the stage before (Isolated split).
  const Pair* stage[3] = {nullptr, nullptr, nullptr};
  for (const Pair& pair : *pairs) {
    if (pair.pattern == tokenfeed::tokenizer::kDeepSeekV3DigitsPattern) stage[0] = &pair;
    if (pair.pattern == tokenfeed::tokenizer::kDeepSeekV3CjkPattern) stage[1] = &pair;
    if (pair.pattern == tokenfeed::tokenizer::kDeepSeekV3MainPattern) stage[2] = &pair;
  }
  if (stage[0] && stage[1] && stage[2]) {
    std::vector<std::string_view> pieces;
    if (!text.empty()) pieces.push_back(text);
    for (const Pair* s : stage) {
      std::vector<std::string_view> next;
      for (std::string_view piece : pieces) {
        const std::vector<Span> spans = Check(*s, piece);
        uint32_t prev = 0;
        for (const Span& m : spans) {
          if (m.begin > prev) next.push_back(piece.substr(prev, m.begin - prev));
          if (m.end > m.begin) next.push_back(piece.substr(m.begin, m.end - m.begin));
          prev = m.end;
        }
        if (prev < piece.size()) next.push_back(piece.substr(prev));
      }
      pieces.swap(next);
    }
    // The fused pass must leave the same pieces, as the same views of the text.
    std::vector<std::string_view> fused;
    tokenfeed::tokenizer::SplitDeepSeekV3(text, &fused);
    bool same = fused.size() == pieces.size();
    for (size_t i = 0; same && i < fused.size(); ++i) {
      same = fused[i].data() == pieces[i].data() && fused[i].size() == pieces[i].size();
    }
    if (!same) {
      std::fprintf(stderr, "pretokenizer_diff: the fused DeepSeek-V3 pass differs from its stages on %zu bytes\n",
                   text.size());
      auto spans_of = [&](const std::vector<std::string_view>& ps) {
        std::vector<Span> spans;
        for (std::string_view p : ps) {
          const auto from = static_cast<uint32_t>(p.data() - text.data());
          spans.push_back({from, from + static_cast<uint32_t>(p.size())});
        }
        return spans;
      };
      PrintSpans("fused", text, spans_of(fused));
      PrintSpans("stages", text, spans_of(pieces));
      std::abort();
    }
  }
  return 0;
}
