// JsonWriter: appends compact JSON to a string, escaping as RFC 8259 asks
// (UTF-8 passes through, invalid UTF-8 becomes U+FFFD, control characters
// become escapes). The one JSON writer of the project's own output: the CLI's
// machine-readable output, the ingest statistics, the rejects file. Not
// validating: callers pair Begin/End and keys. Not thread-safe; one per output.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "base/utf8.h"

namespace tokenfeed {

class JsonWriter {
 public:
  explicit JsonWriter(std::string* out) : out_(out) {}

  JsonWriter& BeginObject() { Sep(); out_->push_back('{'); first_ = true; return *this; }
  JsonWriter& EndObject() { out_->push_back('}'); first_ = false; return *this; }
  JsonWriter& BeginArray() { Sep(); out_->push_back('['); first_ = true; return *this; }
  JsonWriter& EndArray() { out_->push_back(']'); first_ = false; return *this; }
  JsonWriter& Key(std::string_view k) {
    Sep();
    Quote(k);
    out_->push_back(':');
    first_ = true;  // the value follows without a comma
    return *this;
  }
  JsonWriter& String(std::string_view s) { Sep(); Quote(s); return *this; }
  JsonWriter& Bool(bool v) {
    Sep();
    out_->append(v ? "true" : "false");
    return *this;
  }
  JsonWriter& Double(double v, const char* format = "%.3f") {
    Sep();
    char buf[48];
    std::snprintf(buf, sizeof(buf), format, v);
    out_->append(buf);
    return *this;
  }
  JsonWriter& Uint(uint64_t v) {
    Sep();
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof(buf), v);
    out_->append(buf, r.ptr);
    return *this;
  }

 private:
  void Sep() {
    if (!first_) out_->push_back(',');
    first_ = false;
  }
  // Always valid JSON: invalid UTF-8 is written as U+FFFD (the text may be a
  // path or a document's bytes), control characters and DEL as escapes.
  void Quote(std::string_view s) {
    if (FindInvalidUtf8(s) != std::string_view::npos) {
      std::string valid;
      AppendRepairedUtf8(s, &valid);
      QuoteValid(valid);
    } else {
      QuoteValid(s);
    }
  }
  void QuoteValid(std::string_view s) {
    static constexpr char kHex[] = "0123456789abcdef";
    out_->push_back('"');
    for (char c : s) {
      const auto u = static_cast<unsigned char>(c);
      switch (c) {
        case '"': out_->append("\\\""); break;
        case '\\': out_->append("\\\\"); break;
        case '\n': out_->append("\\n"); break;
        case '\r': out_->append("\\r"); break;
        case '\t': out_->append("\\t"); break;
        default:
          if (u < 0x20 || u == 0x7F) {
            out_->append("\\u00");
            out_->push_back(kHex[u >> 4]);
            out_->push_back(kHex[u & 15]);
          } else {
            out_->push_back(c);
          }
      }
    }
    out_->push_back('"');
  }

  std::string* out_;
  bool first_ = true;
};

}  // namespace tokenfeed
