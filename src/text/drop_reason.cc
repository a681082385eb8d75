#include "tokenfeed/drop_reason.h"

#include <array>

namespace tokenfeed::text {
namespace {

constexpr std::array<std::string_view, kDropReasonCount> kNames = {
    "empty", "too_short", "too_long", "duplicate", "invalid_utf8", "bad_json", "missing_field", "not_a_string",
    "untokenizable",
};

}  // namespace

std::string_view DropReasonName(DropReason reason) {
  auto i = static_cast<size_t>(reason);
  return i < kNames.size() ? kNames[i] : std::string_view("unknown");
}

std::optional<DropReason> DropReasonFromName(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) return static_cast<DropReason>(i);
  }
  return std::nullopt;
}

}  // namespace tokenfeed::text
