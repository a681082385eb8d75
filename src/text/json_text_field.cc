#include "text/json_text_field.h"

#include <simdjson.h>

namespace tokenfeed::text {
namespace {

static_assert(simdjson::SIMDJSON_PADDING <= 64, "LineWindow::kPadding must cover simdjson's padding");

// After a very long line the parser holds several times its size; start a
// fresh one so that one outlier does not pin that memory for the whole run.
constexpr size_t kParserKeepBytes = 8u << 20;

std::string_view TypeName(simdjson::dom::element_type type) {
  using simdjson::dom::element_type;
  switch (type) {
    case element_type::ARRAY: return "an array";
    case element_type::OBJECT: return "an object";
    case element_type::INT64:
    case element_type::UINT64:
    case element_type::DOUBLE: return "a number";
    case element_type::STRING: return "a string";
    case element_type::BOOL: return "a boolean";
    case element_type::NULL_VALUE: return "null";
  }
  return "an unknown value";
}

}  // namespace

JsonTextField::JsonTextField(std::string_view path)
    : path_(path), parser_(std::make_unique<simdjson::dom::parser>()) {
  size_t start = 0;
  for (;;) {
    size_t dot = path.find('.', start);
    keys_.emplace_back(path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
}

JsonTextField::~JsonTextField() = default;

JsonTextField::Outcome JsonTextField::Extract(std::string_view line) {
  Outcome out;
  if (parser_->capacity() > kParserKeepBytes && line.size() <= kParserKeepBytes) {
    parser_ = std::make_unique<simdjson::dom::parser>();
  }
  simdjson::dom::element root;
  simdjson::error_code error = parser_->parse(line.data(), line.size(), /*realloc_if_needed=*/false).get(root);
  if (error != simdjson::SUCCESS) {
    out.reason = DropReason::kBadJson;
    out.message = std::string("not valid JSON: ") + simdjson::error_message(error);
    return out;
  }
  if (root.type() != simdjson::dom::element_type::OBJECT) {
    out.reason = DropReason::kBadJson;
    out.message = "the line is " + std::string(TypeName(root.type())) + ", not a JSON object";
    return out;
  }
  simdjson::dom::element value = root;
  std::string walked;
  for (const std::string& key : keys_) {
    if (value.type() != simdjson::dom::element_type::OBJECT) {
      out.reason = DropReason::kMissingField;
      out.message = "field '" + path_ + "' is missing: '" + walked + "' is " + std::string(TypeName(value.type())) +
                    ", not an object";
      return out;
    }
    if (!walked.empty()) walked += '.';
    walked += key;
    simdjson::dom::element child;
    if (value.get_object().at_key(key).get(child) != simdjson::SUCCESS) {
      out.reason = DropReason::kMissingField;
      out.message = "field '" + walked + "' is missing";
      return out;
    }
    value = child;
  }
  if (value.type() != simdjson::dom::element_type::STRING) {
    out.reason = DropReason::kNotAString;
    out.message = "field '" + path_ + "' is " + std::string(TypeName(value.type())) + ", not a string";
    return out;
  }
  std::string_view text;
  if (value.get_string().get(text) != simdjson::SUCCESS) {
    out.reason = DropReason::kNotAString;
    out.message = "field '" + path_ + "' could not be read as a string";
    return out;
  }
  out.ok = true;
  out.text = text;
  return out;
}

}  // namespace tokenfeed::text
