// JsonTextField: the string at a field name or dotted path ("text",
// "meta.body") of one JSON Lines record. The whole line is validated (the
// simdjson DOM parser), so a line with any syntax error is bad_json even when
// the field itself could be read. It does not repair UTF-8 (the reader does,
// before parsing) and cannot name a key that itself contains a dot.
// Owns a parser: one per reader thread; the text is valid until the next call.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenfeed/drop_reason.h"

namespace simdjson::dom {
class parser;
}

namespace tokenfeed::text {

class JsonTextField {
 public:
  // `path`: a key, or keys joined by '.' for nested objects. Must not be empty.
  explicit JsonTextField(std::string_view path);
  ~JsonTextField();
  JsonTextField(const JsonTextField&) = delete;
  JsonTextField& operator=(const JsonTextField&) = delete;

  struct Outcome {
    bool ok = false;
    std::string_view text;     // when ok: the unescaped string
    DropReason reason{};       // when not ok: kBadJson, kMissingField or kNotAString
    std::string message;       // when not ok: what is wrong, for the rejects file
  };

  // `line` must be followed by at least 64 readable bytes (simdjson's padding).
  Outcome Extract(std::string_view line);

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<std::string> keys_;
  std::unique_ptr<simdjson::dom::parser> parser_;
};

}  // namespace tokenfeed::text
