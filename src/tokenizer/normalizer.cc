#include "tokenizer/normalizer.h"

#include <cstdlib>
#include <utility>

#include <utf8proc.h>

#include "base/utf8.h"
#include "tokenizer/nfc_quick_check.h"

namespace tokenfeed::tokenizer {
namespace {

// Decodes the code point at text[*i] (valid UTF-8) and advances *i.
inline char32_t NextCodePoint(std::string_view text, size_t* i) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  unsigned char b = p[*i];
  if (b < 0x80) {
    *i += 1;
    return b;
  }
  if (b < 0xE0) {
    char32_t c = (char32_t(b & 0x1F) << 6) | (p[*i + 1] & 0x3F);
    *i += 2;
    return c;
  }
  if (b < 0xF0) {
    char32_t c = (char32_t(b & 0x0F) << 12) | (char32_t(p[*i + 1] & 0x3F) << 6) | (p[*i + 2] & 0x3F);
    *i += 3;
    return c;
  }
  char32_t c = (char32_t(b & 0x07) << 18) | (char32_t(p[*i + 1] & 0x3F) << 12) | (char32_t(p[*i + 2] & 0x3F) << 6) |
               (p[*i + 3] & 0x3F);
  *i += 4;
  return c;
}

bool IsWhiteSpace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

// Appends utf8proc's form `options` of `text` (valid UTF-8) to `out`.
void AppendMapped(std::string_view text, int options, std::string* out) {
  utf8proc_uint8_t* mapped = nullptr;
  const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                          static_cast<utf8proc_ssize_t>(text.size()), &mapped,
                                          static_cast<utf8proc_option_t>(options));
  if (n < 0) {
    out->append(text);  // cannot happen on valid UTF-8; leave the text as it is
  } else {
    out->append(reinterpret_cast<const char*>(mapped), static_cast<size_t>(n));
  }
  std::free(mapped);
}

// NFC without a pass of utf8proc over all of the text: characters that the
// quick check (nfc_quick_check.h) passes are kept as they are, and only the
// stretches around the others, each from the starter before it to the next
// starter, go through utf8proc. Cutting before a starter leaves NFC of the
// whole the concatenation of NFC of the parts.
// HOT PATH for tokenizers with an NFC normalizer (Qwen).
std::string_view NormalizeNfc(std::string_view text, std::string* storage) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  constexpr int kNfc = UTF8PROC_STABLE | UTF8PROC_COMPOSE;
  bool changed = false;
  size_t kept = 0;      // text[0, kept) is in *storage (once changed)
  size_t starter = 0;   // where the last starter begins
  uint8_t last_class = 0;
  size_t i = 0;
  while (i < n) {
    if (p[i] < 0x80) {  // ASCII: starters that nothing joins
      starter = i++;
      last_class = 0;
      continue;
    }
    size_t next = i;
    const uint8_t c = NfcStableClass(NextCodePoint(text, &next));
    if (c == 0) {
      starter = i;
      last_class = 0;
      i = next;
      continue;
    }
    if (c != kNfcMayChange && c >= last_class) {
      last_class = c;
      i = next;
      continue;
    }
    // Normalize from the last starter up to the next one.
    size_t stop = next;
    while (stop < n) {
      if (p[stop] < 0x80) break;
      size_t after = stop;
      if (NfcStableClass(NextCodePoint(text, &after)) == 0) break;
      stop = after;
    }
    if (!changed) {
      storage->clear();
      storage->reserve(n + 16);
      changed = true;
    }
    storage->append(text.data() + kept, starter - kept);
    AppendMapped(text.substr(starter, stop - starter), kNfc, storage);
    kept = stop;
    starter = stop;
    last_class = 0;
    i = stop;
  }
  if (!changed) return text;
  storage->append(text.data() + kept, n - kept);
  return *storage;
}

class UnicodeNormalizer final : public Normalizer {
 public:
  explicit UnicodeNormalizer(UnicodeForm form) : form_(form) {}

  std::string_view Normalize(std::string_view text, std::string* storage) const override {
    if (form_ == UnicodeForm::kNfc) return NormalizeNfc(text, storage);
    if (QuickCheckUnchanged(text)) return text;
    int options = UTF8PROC_STABLE;
    switch (form_) {
      case UnicodeForm::kNfc: options |= UTF8PROC_COMPOSE; break;
      case UnicodeForm::kNfd: options |= UTF8PROC_DECOMPOSE; break;
      case UnicodeForm::kNfkc: options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT; break;
      case UnicodeForm::kNfkd: options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT; break;
    }
    utf8proc_uint8_t* out = nullptr;
    utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                      static_cast<utf8proc_ssize_t>(text.size()), &out,
                                      static_cast<utf8proc_option_t>(options));
    if (n < 0) return text;  // cannot happen on valid UTF-8; leave the text as it is
    storage->assign(reinterpret_cast<const char*>(out), static_cast<size_t>(n));
    std::free(out);
    return *storage;
  }

  std::string Describe() const override {
    switch (form_) {
      case UnicodeForm::kNfc: return "NFC";
      case UnicodeForm::kNfd: return "NFD";
      case UnicodeForm::kNfkc: return "NFKC";
      case UnicodeForm::kNfkd: return "NFKD";
    }
    return "?";
  }

 private:
  // True when the form certainly leaves `text` unchanged: no character
  // decomposes (canonically, or at all for the K forms), has a non-zero
  // combining class, or can combine with a character before it.
  bool QuickCheckUnchanged(std::string_view text) const {
    const bool compat = form_ == UnicodeForm::kNfkc || form_ == UnicodeForm::kNfkd;
    const bool compose = form_ == UnicodeForm::kNfc || form_ == UnicodeForm::kNfkc;
    size_t i = 0;
    while (i < text.size()) {
      // Below U+00A0 nothing decomposes or combines.
      if (static_cast<unsigned char>(text[i]) < 0x80) {
        ++i;
        continue;
      }
      char32_t c = NextCodePoint(text, &i);
      if (c < 0xA0) continue;
      const utf8proc_property_t* p = utf8proc_get_property(static_cast<utf8proc_int32_t>(c));
      if (p->combining_class != 0) return false;
      if (p->decomp_seqindex != UINT16_MAX && (compat || p->decomp_type == 0)) return false;
      if (c >= 0xAC00 && c <= 0xD7A3 && !compose) return false;  // Hangul syllables decompose
      if (compose) {
        if (p->comb_index != UINT16_MAX && p->comb_index >= 0x8000) return false;  // a second in a pair
        if ((c >= 0x1161 && c <= 0x1175) || (c >= 0x11A8 && c <= 0x11C2)) return false;  // Hangul V, T jamo
      }
    }
    return true;
  }

  UnicodeForm form_;
};

class LowercaseNormalizer final : public Normalizer {
 public:
  std::string_view Normalize(std::string_view text, std::string* storage) const override {
    bool changes = false;
    for (size_t i = 0; i < text.size() && !changes;) {
      unsigned char b = static_cast<unsigned char>(text[i]);
      if (b < 0x80) {
        changes = b >= 'A' && b <= 'Z';
        ++i;
        continue;
      }
      char32_t c = NextCodePoint(text, &i);
      changes = c == 0x130 || static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))) != c;
    }
    if (!changes) return text;
    storage->clear();
    storage->reserve(text.size() + 8);
    for (size_t i = 0; i < text.size();) {
      char32_t c = NextCodePoint(text, &i);
      if (c == 0x130) {
        // The one unconditional full lowercase mapping that is not a single
        // character (SpecialCasing.txt), which the reference applies.
        storage->append("i\xCC\x87");
        continue;
      }
      AppendUtf8(static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))), storage);
    }
    return *storage;
  }
  std::string Describe() const override { return "Lowercase"; }
};

class StripNormalizer final : public Normalizer {
 public:
  StripNormalizer(bool left, bool right) : left_(left), right_(right) {}
  std::string_view Normalize(std::string_view text, std::string*) const override {
    size_t begin = 0, end = text.size();
    if (left_) {
      while (begin < end) {
        size_t j = begin;
        if (!IsWhiteSpace(NextCodePoint(text, &j))) break;
        begin = j;
      }
    }
    if (right_) {
      while (end > begin) {
        size_t start = end - 1;
        while (start > begin && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
        size_t j = start;
        if (!IsWhiteSpace(NextCodePoint(text, &j))) break;
        end = start;
      }
    }
    return text.substr(begin, end - begin);
  }
  std::string Describe() const override { return "Strip"; }

 private:
  bool left_, right_;
};

class PrependNormalizer final : public Normalizer {
 public:
  explicit PrependNormalizer(std::string prefix) : prefix_(std::move(prefix)) {}
  std::string_view Normalize(std::string_view text, std::string* storage) const override {
    if (text.empty()) return text;
    storage->assign(prefix_);
    storage->append(text);
    return *storage;
  }
  std::string Describe() const override { return "Prepend"; }

 private:
  std::string prefix_;
};

class ReplaceNormalizer final : public Normalizer {
 public:
  ReplaceNormalizer(std::unique_ptr<SplitMatcher> pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  std::string_view Normalize(std::string_view text, std::string* storage) const override {
    std::vector<Span> matches;
    pattern_->FindMatches(text, &matches);
    if (matches.empty()) return text;
    std::string out;
    out.reserve(text.size());
    uint32_t prev = 0;
    for (const Span& m : matches) {
      out.append(text.substr(prev, m.begin - prev));
      out.append(content_);
      prev = m.end;
    }
    out.append(text.substr(prev));
    *storage = std::move(out);
    return *storage;
  }
  std::string Describe() const override { return "Replace"; }

 private:
  std::unique_ptr<SplitMatcher> pattern_;
  std::string content_;
};

class SequenceNormalizer final : public Normalizer {
 public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> steps) : steps_(std::move(steps)) {}
  std::string_view Normalize(std::string_view text, std::string* storage) const override {
    std::string_view current = text;
    std::string scratch;
    for (const auto& step : steps_) {
      std::string_view next = step->Normalize(current, &scratch);
      if (next.data() == scratch.data() && !scratch.empty()) {
        // The step wrote into scratch: move it to storage so the next step
        // may reuse scratch.
        storage->assign(next);
        current = *storage;
      } else {
        current = next;
      }
    }
    return current;
  }
  std::string Describe() const override {
    std::string s = "Sequence[";
    for (size_t i = 0; i < steps_.size(); ++i) {
      if (i) s += ',';
      s += steps_[i]->Describe();
    }
    return s + "]";
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> steps_;
};

}  // namespace

std::unique_ptr<Normalizer> MakeUnicodeNormalizer(UnicodeForm form) {
  return std::make_unique<UnicodeNormalizer>(form);
}
std::unique_ptr<Normalizer> MakeLowercaseNormalizer() { return std::make_unique<LowercaseNormalizer>(); }
std::unique_ptr<Normalizer> MakeStripNormalizer(bool left, bool right) {
  return std::make_unique<StripNormalizer>(left, right);
}
std::unique_ptr<Normalizer> MakePrependNormalizer(std::string prefix) {
  return std::make_unique<PrependNormalizer>(std::move(prefix));
}
std::unique_ptr<Normalizer> MakeReplaceNormalizer(std::unique_ptr<SplitMatcher> pattern, std::string content) {
  return std::make_unique<ReplaceNormalizer>(std::move(pattern), std::move(content));
}
std::unique_ptr<Normalizer> MakeSequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> steps) {
  return std::make_unique<SequenceNormalizer>(std::move(steps));
}

}  // namespace tokenfeed::tokenizer
