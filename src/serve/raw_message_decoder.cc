#include "serve/raw_message_decoder.h"

#include "base/utf8.h"

namespace tokenfeed::serve {
namespace {

// simdjson reads up to 64 bytes past the end of its input.
constexpr size_t kJsonPadding = 64;

bool LooksLikeJsonObject(std::string_view s) {
  for (char c : s) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    return c == '{';
  }
  return false;
}

}  // namespace

Result<RawFormat> ParseRawFormat(std::string_view name) {
  if (name == "auto") return RawFormat::kAuto;
  if (name == "json") return RawFormat::kJson;
  if (name == "text") return RawFormat::kText;
  return Status::InvalidArgument("unknown raw message format '" + std::string(name) + "': use auto, json or text");
}

RawMessageDecoder::RawMessageDecoder(RawFormat format, std::string_view json_field)
    : format_(format), json_(json_field) {}

DecodedMessage RawMessageDecoder::Decode(std::span<const std::byte> value) {
  const std::string_view raw(reinterpret_cast<const char*>(value.data()), value.size());
  DecodedMessage out;
  std::string_view text = raw;
  buffer_.clear();
  if (!IsValidUtf8(raw)) {
    AppendRepairedUtf8(raw, &buffer_);
    out.repaired_utf8 = true;
    text = buffer_;
  }
  const bool json = format_ == RawFormat::kJson || (format_ == RawFormat::kAuto && LooksLikeJsonObject(text));
  if (!json) {
    out.ok = true;
    out.text = text;
    return out;
  }
  if (!out.repaired_utf8) buffer_.assign(raw);
  const size_t size = buffer_.size();
  buffer_.append(kJsonPadding, ' ');
  text::JsonTextField::Outcome r = json_.Extract(std::string_view(buffer_.data(), size));
  out.ok = r.ok;
  out.text = r.text;
  out.reason = r.reason;
  out.message = std::move(r.message);
  return out;
}

}  // namespace tokenfeed::serve
