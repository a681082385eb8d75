// DropReason: why a document did not reach the tokenizer, one code for the
// reader's rejects (bad_json, missing_field, ...) and the cleaner's drops
// (empty, too_short, duplicate, ...), so one table counts both.
// The names are stable: they appear in the --rejects file and in reports.
// Plain enum and constexpr tables: safe on any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tokenfeed::text {

enum class DropReason : uint8_t {
  kEmpty = 0,     // nothing left after cleaning
  kTooShort,      // under CleanOptions::min_chars / min_bytes
  kTooLong,       // over ReaderOptions::max_document_bytes or CleanOptions::max_chars / max_bytes
  kDuplicate,     // same cleaned text as an earlier document of this run
  kInvalidUtf8,   // invalid UTF-8 under Utf8Policy::kReject
  kBadJson,       // a JSONL line that is not one valid JSON object
  kMissingField,  // the JSON object lacks the text field (or a parent on its dotted path)
  kNotAString,    // the text field holds a number, object, array, bool or null
  kUntokenizable, // the tokenizer refused the text (a regex search past its limits); serve only
};

inline constexpr size_t kDropReasonCount = 9;

// "empty", "too_short", "too_long", "duplicate", "invalid_utf8", "bad_json",
// "missing_field", "not_a_string", "untokenizable".
std::string_view DropReasonName(DropReason reason);

// The reason with that name, or nullopt.
std::optional<DropReason> DropReasonFromName(std::string_view name);

}  // namespace tokenfeed::text
