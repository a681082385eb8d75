// Cleaner: the per-document cleaning rules in one pass: drop control
// characters, normalise line endings, trim white space, check length limits.
// Deterministic; returns a view of the input when only trimming applies, so
// clean text costs no copy. It does not deduplicate (content_dedup.h) or
// split. Clean is const: share one Cleaner among threads, each with its own
// scratch string and CleaningStats.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tokenfeed/clean_options.h"
#include "tokenfeed/cleaning_stats.h"
#include "tokenfeed/drop_reason.h"
#include "tokenfeed/status.h"

namespace tokenfeed::text {

struct CleanResult {
  bool kept = false;
  DropReason reason{};     // when !kept
  std::string_view text;   // when kept: a view of the input or of the caller's scratch
  bool changed = false;    // the text differs from the input
};

class Cleaner {
 public:
  // InvalidArgument when a minimum is above its maximum.
  static Result<Cleaner> Create(const CleanOptions& options);

  // Cleans `text`, which the reader has made valid UTF-8 (invalid input is
  // repaired with U+FFFD here too, never passed on). The result's text is
  // valid until `text` or `*scratch` changes. Counts into `*stats`.
  CleanResult Clean(std::string_view text, std::string* scratch, CleaningStats* stats) const;

  const CleanOptions& options() const { return options_; }

 private:
  explicit Cleaner(const CleanOptions& options);
  CleanResult CleanValid(std::string_view text, std::string* scratch) const;
  std::string_view Trim(std::string_view text) const;

  CleanOptions options_;
  // special_[b] != 0: byte b may need to change (a control, CR, or 0xC2 that
  // may start a C1 control).
  unsigned char special_[256];
};

}  // namespace tokenfeed::text
