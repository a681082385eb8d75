#include "text/cleaner.h"

#include <cstring>

#include "base/utf8.h"

namespace tokenfeed::text {
namespace {

enum : unsigned char { kPlain = 0, kControl = 1, kCarriageReturn = 2, kLeadC2 = 3 };

// Whether the two bytes at p (n >= 2 available) encode a C1 control to drop.
inline bool IsDroppedC1(const unsigned char* p, size_t n) {
  return n >= 2 && p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F && p[1] != 0x85;
}

// Length of the Unicode White_Space character at the start of p, or 0.
size_t WhitespaceAtStart(const unsigned char* p, size_t n) {
  if (n == 0) return 0;
  unsigned char b = p[0];
  if (b == ' ' || (b >= 0x09 && b <= 0x0D)) return 1;
  if (n >= 2 && b == 0xC2 && (p[1] == 0x85 || p[1] == 0xA0)) return 2;
  if (n >= 3) {
    unsigned char c = p[1], d = p[2];
    if (b == 0xE1 && c == 0x9A && d == 0x80) return 3;  // U+1680
    if (b == 0xE2 && c == 0x80 && ((d >= 0x80 && d <= 0x8A) || d == 0xA8 || d == 0xA9 || d == 0xAF)) return 3;
    if (b == 0xE2 && c == 0x81 && d == 0x9F) return 3;  // U+205F
    if (b == 0xE3 && c == 0x80 && d == 0x80) return 3;  // U+3000
  }
  return 0;
}

// Length of the Unicode White_Space character that ends p[0..n), or 0.
size_t WhitespaceAtEnd(const unsigned char* p, size_t n) {
  if (n == 0) return 0;
  unsigned char last = p[n - 1];
  if (last < 0x80) return WhitespaceAtStart(p + n - 1, 1);
  if (n >= 2 && p[n - 2] == 0xC2) return WhitespaceAtStart(p + n - 2, 2);
  if (n >= 3) return WhitespaceAtStart(p + n - 3, 3) == 3 ? 3 : 0;
  return 0;
}

uint64_t CountCodePoints(std::string_view s) {
  uint64_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

}  // namespace

Result<Cleaner> Cleaner::Create(const CleanOptions& options) {
  if (options.max_chars != 0 && options.min_chars > options.max_chars) {
    return Status::InvalidArgument("minimum length " + std::to_string(options.min_chars) +
                                   " characters is above the maximum " + std::to_string(options.max_chars));
  }
  if (options.max_bytes != 0 && options.min_bytes > options.max_bytes) {
    return Status::InvalidArgument("minimum length " + std::to_string(options.min_bytes) +
                                   " bytes is above the maximum " + std::to_string(options.max_bytes));
  }
  return Cleaner(options);
}

Cleaner::Cleaner(const CleanOptions& options) : options_(options) {
  std::memset(special_, kPlain, sizeof(special_));
  if (options_.drop_controls) {
    for (int b = 0; b < 0x20; ++b) special_[b] = kControl;
    special_[static_cast<unsigned char>('\t')] = kPlain;
    special_[static_cast<unsigned char>('\n')] = kPlain;
    special_[static_cast<unsigned char>('\r')] = kPlain;
    special_[0x7F] = kControl;
    special_[0xC2] = kLeadC2;
  }
  if (options_.normalize_newlines) special_[static_cast<unsigned char>('\r')] = kCarriageReturn;
}

std::string_view Cleaner::Trim(std::string_view text) const {
  if (!options_.trim) return text;
  const auto* q = reinterpret_cast<const unsigned char*>(text.data());
  size_t begin = 0, end = text.size();
  while (size_t w = WhitespaceAtStart(q + begin, end - begin)) begin += w;
  while (end > begin) {
    size_t w = WhitespaceAtEnd(q + begin, end - begin);
    if (w == 0) break;
    end -= w;
  }
  return text.substr(begin, end - begin);
}

CleanResult Cleaner::CleanValid(std::string_view input, std::string* scratch) const {
  CleanResult result;
  // Trimming first keeps a trailing CRLF (common in books) from forcing a
  // copy. It gives the same result as trimming last: the cut ends hold only
  // white space, which cleaning maps to white space or removes.
  std::string_view text = Trim(input);
  result.changed = text.size() != input.size();
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();

  // Hot path: find the first byte that must change. 0xC2 is common in
  // Latin-1 text (NBSP, guillemets, degree sign) and rarely a C1 control.
  size_t i = 0;
  for (; i < n; ++i) {
    unsigned char kind = special_[p[i]];
    if (kind == kPlain) continue;
    if (kind == kLeadC2 && !IsDroppedC1(p + i, n - i)) continue;
    break;
  }
  std::string_view out = text;
  if (i < n) {
    scratch->clear();
    scratch->reserve(n);
    size_t run = 0;  // start of bytes not yet copied
    while (i < n) {
      unsigned char kind = special_[p[i]];
      if (kind == kPlain || (kind == kLeadC2 && !IsDroppedC1(p + i, n - i))) {
        ++i;
        continue;
      }
      scratch->append(text.data() + run, i - run);
      if (kind == kCarriageReturn) {
        if (i + 1 < n && p[i + 1] == '\n') {
          ++i;  // the LF after it is copied with the next run
        } else {
          scratch->push_back('\n');
          ++i;
        }
      } else if (kind == kLeadC2) {
        i += 2;
      } else {
        ++i;
      }
      run = i;
    }
    scratch->append(text.data() + run, n - run);
    out = Trim(*scratch);  // a dropped control may have hidden white space at an end
    result.changed = true;
  }

  if (out.empty()) {
    result.reason = DropReason::kEmpty;
    return result;
  }
  if (options_.min_bytes != 0 && out.size() < options_.min_bytes) {
    result.reason = DropReason::kTooShort;
    return result;
  }
  if (options_.max_bytes != 0 && out.size() > options_.max_bytes) {
    result.reason = DropReason::kTooLong;
    return result;
  }
  if (options_.min_chars != 0 || options_.max_chars != 0) {
    uint64_t chars = CountCodePoints(out);
    if (chars < options_.min_chars) {
      result.reason = DropReason::kTooShort;
      return result;
    }
    if (options_.max_chars != 0 && chars > options_.max_chars) {
      result.reason = DropReason::kTooLong;
      return result;
    }
  }
  result.kept = true;
  result.text = out;
  return result;
}

CleanResult Cleaner::Clean(std::string_view text, std::string* scratch, CleaningStats* stats) const {
  CleanResult result;
  if (IsValidUtf8(text)) {
    result = CleanValid(text, scratch);
  } else {
    std::string repaired;
    AppendRepairedUtf8(text, &repaired);
    result = CleanValid(repaired, scratch);
    if (result.kept) {  // the view may point into `repaired`, which dies here
      std::string kept(result.text);
      *scratch = std::move(kept);
      result.text = *scratch;
    }
    result.changed = true;
  }
  ++stats->documents;
  stats->bytes_in += text.size();
  if (result.kept) {
    ++stats->kept;
    stats->bytes_out += result.text.size();
    if (result.changed) ++stats->changed;
  } else {
    ++stats->dropped_for(result.reason);
  }
  return result;
}

}  // namespace tokenfeed::text
