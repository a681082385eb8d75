// JsonWriter: appends compact JSON to a string, escaping as RFC 8259 asks
// (UTF-8 passes through; control characters become \u00XX). For the CLI's
// machine-readable output (the CLI, the ingest statistics). Not validating: callers pair Begin/End and keys.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

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
  void Quote(std::string_view s) {
    out_->push_back('"');
    for (char c : s) {
      unsigned char u = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\') {
        out_->push_back('\\');
        out_->push_back(c);
      } else if (c == '\n') {
        out_->append("\\n");
      } else if (c == '\t') {
        out_->append("\\t");
      } else if (u < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\u%04x", u);
        out_->append(buf);
      } else {
        out_->push_back(c);
      }
    }
    out_->push_back('"');
  }

  std::string* out_;
  bool first_ = true;
};

}  // namespace tokenfeed
