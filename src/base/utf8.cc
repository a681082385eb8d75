#include "base/utf8.h"

#include <cstring>
#include <string>

#include <simdjson.h>

#include "tokenfeed/utf8_policy.h"

namespace tokenfeed {
namespace {

// Length of the valid sequence that starts at text[i], or 0 when the bytes at
// i begin an invalid subpart; *subpart is then the length of that maximal
// invalid subpart (at least 1).
size_t ValidSequenceAt(const unsigned char* p, size_t n, size_t* subpart) {
  unsigned char b0 = p[0];
  if (b0 < 0x80) return 1;
  size_t need;
  unsigned char lo = 0x80, hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    *subpart = 1;
    return 0;
  }
  size_t k = 1;
  for (; k < need; ++k) {
    if (k >= n) break;
    unsigned char c = p[k];
    unsigned char klo = k == 1 ? lo : 0x80;
    unsigned char khi = k == 1 ? hi : 0xBF;
    if (c < klo || c > khi) break;
  }
  if (k == need) return need;
  *subpart = k;
  return 0;
}

}  // namespace

size_t FindInvalidUtf8(std::string_view text) {
  if (simdjson::validate_utf8(text.data(), text.size())) return std::string_view::npos;
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    size_t subpart = 0;
    size_t len = ValidSequenceAt(p + i, n - i, &subpart);
    if (len == 0) return i;
    i += len;
  }
  return std::string_view::npos;  // unreachable when simdjson said invalid
}

size_t AppendRepairedUtf8(std::string_view text, std::string* out) {
  size_t first_bad = FindInvalidUtf8(text);
  if (first_bad == std::string_view::npos) {
    out->append(text);
    return 0;
  }
  out->reserve(out->size() + text.size() + 16);
  out->append(text.substr(0, first_bad));
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  size_t n = text.size();
  size_t i = first_bad;
  size_t replacements = 0;
  size_t run_start = i;
  while (i < n) {
    size_t subpart = 0;
    size_t len = ValidSequenceAt(p + i, n - i, &subpart);
    if (len != 0) {
      i += len;
      continue;
    }
    out->append(text.data() + run_start, i - run_start);
    out->append("\xEF\xBF\xBD");
    ++replacements;
    i += subpart;
    run_start = i;
  }
  out->append(text.data() + run_start, n - run_start);
  return replacements;
}

void AppendUtf8(char32_t cp, std::string* out) {
  char buf[4];
  size_t len;
  if (cp < 0x80) {
    buf[0] = static_cast<char>(cp);
    len = 1;
  } else if (cp < 0x800) {
    buf[0] = static_cast<char>(0xC0 | (cp >> 6));
    buf[1] = static_cast<char>(0x80 | (cp & 0x3F));
    len = 2;
  } else if (cp < 0x10000) {
    buf[0] = static_cast<char>(0xE0 | (cp >> 12));
    buf[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    buf[2] = static_cast<char>(0x80 | (cp & 0x3F));
    len = 3;
  } else {
    buf[0] = static_cast<char>(0xF0 | (cp >> 18));
    buf[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    buf[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    buf[3] = static_cast<char>(0x80 | (cp & 0x3F));
    len = 4;
  }
  out->append(buf, len);
}

Result<Utf8Policy> ParseUtf8Policy(std::string_view name) {
  if (name == "replace") return Utf8Policy::kReplace;
  if (name == "reject") return Utf8Policy::kReject;
  return Status::InvalidArgument(
      "the UTF-8 policy must be 'replace' (invalid bytes become U+FFFD) or 'reject' (the text is refused), not '" +
      std::string(name) + "'");
}

}  // namespace tokenfeed
