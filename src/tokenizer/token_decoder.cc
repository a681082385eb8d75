#include "tokenizer/token_decoder.h"

#include <utility>

#include "base/utf8.h"
#include "tokenizer/byte_level_alphabet.h"
#include "tokenizer/unicode_class.h"

namespace tokenfeed::tokenizer {
namespace {

// The byte a "<0xNN>" token stands for, or -1. As the reference: exactly six
// bytes, and what Rust's u8::from_str_radix(_, 16) accepts between "<0x" and
// ">" (two hex digits of either case, or '+' and one).
int FallbackByte(std::string_view t) {
  if (t.size() != 6 || t.substr(0, 3) != "<0x" || t[5] != '>') return -1;
  auto hex = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  if (t[3] == '+') return hex(t[4]);
  const int hi = hex(t[3]), lo = hex(t[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

std::vector<char32_t> Chars(std::string_view s) {
  std::vector<char32_t> out;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const unsigned char* end = p + s.size();
  while (p < end) {
    char32_t c;
    p += unicode::DecodeUtf8(p, end, &c);
    out.push_back(c);
  }
  return out;
}

void Replace(const DecoderStep& step, std::vector<std::string>* tokens) {
  std::vector<Span> matches;
  for (std::string& t : *tokens) {
    matches.clear();
    step.pattern->FindMatches(t, &matches);
    if (matches.empty()) continue;
    std::string out;
    uint32_t prev = 0;
    for (const Span& m : matches) {
      out.append(t, prev, m.begin - prev);
      out.append(step.content);
      prev = m.end;
    }
    out.append(t, prev);
    t = std::move(out);
  }
}

void ByteFallback(std::vector<std::string>* tokens) {
  std::vector<std::string> out;
  std::string bytes;
  auto flush = [&] {
    if (bytes.empty()) return;
    if (IsValidUtf8(bytes)) {
      out.push_back(bytes);
    } else {
      for (size_t i = 0; i < bytes.size(); ++i) out.emplace_back("\xEF\xBF\xBD");
    }
    bytes.clear();
  };
  for (std::string& t : *tokens) {
    const int b = FallbackByte(t);
    if (b >= 0) {
      bytes.push_back(static_cast<char>(b));
      continue;
    }
    flush();
    out.push_back(std::move(t));
  }
  flush();
  *tokens = std::move(out);
}

void Strip(const DecoderStep& step, std::vector<std::string>* tokens) {
  for (std::string& t : *tokens) {
    const std::vector<char32_t> chars = Chars(t);
    size_t begin = 0;
    while (begin < step.start && begin < chars.size() && chars[begin] == step.strip_char) ++begin;
    size_t end = chars.size();
    for (size_t i = 0; i < step.stop && end > begin && chars[end - 1] == step.strip_char; ++i) --end;
    if (begin == 0 && end == chars.size()) continue;
    std::string out;
    for (size_t i = begin; i < end; ++i) AppendUtf8(chars[i], &out);
    t = std::move(out);
  }
}

void Metaspace(const DecoderStep& step, std::vector<std::string>* tokens) {
  for (size_t k = 0; k < tokens->size(); ++k) {
    std::string out;
    for (char32_t c : Chars((*tokens)[k])) {
      if (c != step.strip_char) {
        AppendUtf8(c, &out);
      } else if (k != 0 || step.prepend_never) {
        out.push_back(' ');
      }
    }
    (*tokens)[k] = std::move(out);
  }
}

void ByteLevel(std::vector<std::string>* tokens) {
  std::string bytes;
  for (const std::string& t : *tokens) bytes.append(ByteLevelTokenBytes(t));
  tokens->clear();
  if (IsValidUtf8(bytes)) {
    tokens->push_back(std::move(bytes));
  } else {
    std::string repaired;
    AppendRepairedUtf8(bytes, &repaired);
    tokens->push_back(std::move(repaired));
  }
}

}  // namespace

std::string ByteLevelTokenBytes(std::string_view text) {
  std::string bytes;
  size_t i = 0;
  while (i < text.size()) {
    unsigned char b = static_cast<unsigned char>(text[i]);
    char32_t cp;
    if (b < 0x80) {
      cp = b;
      i += 1;
    } else if ((b & 0xE0) == 0xC0 && i + 1 < text.size()) {
      cp = (char32_t(b & 0x1F) << 6) | (static_cast<unsigned char>(text[i + 1]) & 0x3F);
      i += 2;
    } else {
      return std::string(text);
    }
    int byte = kByteLevelAlphabet.CharToByte(cp);
    if (byte < 0) return std::string(text);
    bytes.push_back(static_cast<char>(byte));
  }
  return bytes;
}

std::string TokenDecoder::Decode(std::vector<std::string> tokens) const {
  for (const DecoderStep& step : steps_) {
    switch (step.kind) {
      case DecoderStep::Kind::kReplace: Replace(step, &tokens); break;
      case DecoderStep::Kind::kByteFallback: ByteFallback(&tokens); break;
      case DecoderStep::Kind::kFuse: {
        std::string all;
        for (const std::string& t : tokens) all.append(t);
        tokens.assign(1, std::move(all));
        break;
      }
      case DecoderStep::Kind::kStrip: Strip(step, &tokens); break;
      case DecoderStep::Kind::kMetaspace: Metaspace(step, &tokens); break;
      case DecoderStep::Kind::kByteLevel: ByteLevel(&tokens); break;
    }
  }
  std::string text;
  for (const std::string& t : tokens) text.append(t);
  return text;
}

}  // namespace tokenfeed::tokenizer
