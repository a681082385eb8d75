// Records for log tests whose bytes name the offset they must end up at, so
// a test can check order, density and integrity of whatever it reads back
// without keeping a copy. For tests only; header-only.
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tokenfeed/log_batch.h"

namespace tokenfeed::log::testing {

// "r<n>:" then a deterministic filler of 0..(max_extra) bytes.
inline std::string TestRecord(uint64_t n, size_t max_extra = 61) {
  std::string s(1, 'r');
  s += std::to_string(n);
  s += ':';
  const size_t extra = max_extra == 0 ? 0 : (n * 2654435761u) % (max_extra + 1);
  for (size_t i = 0; i < extra; ++i) s.push_back(static_cast<char>('a' + (n + i) % 26));
  return s;
}

// The n a TestRecord names, if the bytes are exactly TestRecord(n, max_extra).
inline std::optional<uint64_t> TestRecordNumber(std::string_view bytes, size_t max_extra = 61) {
  if (bytes.size() < 3 || bytes[0] != 'r') return std::nullopt;
  const size_t colon = bytes.find(':');
  if (colon == std::string_view::npos || colon == 1 || colon > 21) return std::nullopt;
  uint64_t n = 0;
  for (size_t i = 1; i < colon; ++i) {
    if (bytes[i] < '0' || bytes[i] > '9') return std::nullopt;
    n = n * 10 + static_cast<uint64_t>(bytes[i] - '0');
  }
  if (bytes != TestRecord(n, max_extra)) return std::nullopt;
  return n;
}

// A batch of TestRecords first, first+1, ..., first+count-1.
inline void FillTestBatch(BatchBuilder* b, uint64_t first, uint32_t count, size_t max_extra = 61) {
  b->Clear();
  for (uint32_t i = 0; i < count; ++i) b->Add(TestRecord(first + i, max_extra));
}

}  // namespace tokenfeed::log::testing
