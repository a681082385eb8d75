#include "cli/terminal_text.h"

#include <cstdio>

#include "base/utf8.h"

namespace tokenfeed::cli {
namespace {

void AppendHexByte(const char* prefix, unsigned value, std::string* out) {
  char buf[12];
  std::snprintf(buf, sizeof buf, "%s%02x", prefix, value);
  out->append(buf);
}

// The length of the valid UTF-8 sequence at text[i], or 0.
size_t SequenceLength(std::string_view text, size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  const size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  return IsValidUtf8(text.substr(i, n)) ? n : 0;
}

}  // namespace

void AppendEscapedForTerminal(std::string_view text, std::string* out) {
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      out->append("\\n");
    } else if (c == '\t') {
      out->append("\\t");
    } else if (c == '\r') {
      out->append("\\r");
    } else if (c == '\\') {
      out->append("\\\\");
    } else if (c < 0x20 || c == 0x7F) {
      AppendHexByte("\\x", c, out);
    } else if (c < 0x80) {
      out->push_back(static_cast<char>(c));
    } else {
      const size_t n = SequenceLength(text, i);
      if (n == 0) {
        AppendHexByte("\\x", c, out);
        ++i;
        continue;
      }
      const auto second = static_cast<unsigned char>(text[i + 1]);
      if (c == 0xC2 && second >= 0x80 && second <= 0x9F) {
        AppendHexByte("\\u00", second, out);  // a C1 control, e.g. U+009B (CSI)
      } else {
        out->append(text.substr(i, n));
      }
      i += n;
      continue;
    }
    ++i;
  }
}

std::string_view Utf8Prefix(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

}  // namespace tokenfeed::cli
