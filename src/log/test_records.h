// Records for log tests whose bytes name the offset they must end up at, so
// a test can check order, density and integrity of whatever it reads back
// without keeping a copy. For tests only; header-only.
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/crc32c.h"
#include "log/batch_access.h"
#include "log/log_format.h"
#include "log/log_batch.h"

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

// The exact bytes a writer stores for FillTestBatch(first, count) appended at
// offset `first`: for tests that forge torn or damaged tails.
inline std::string EncodeTestBatch(uint64_t first, uint32_t count, size_t max_extra = 61) {
  BatchBuilder b;
  FillTestBatch(&b, first, count, max_extra);
  std::span<uint8_t> bytes = BatchBuilderAccess::Bytes(b);
  format::BatchHeader h;
  h.batch_length = static_cast<uint32_t>(bytes.size());
  h.record_count = count;
  h.base_offset = Offset(first);
  h.data_crc = crc32c::Value(bytes.data() + format::kBatchHeaderSize, bytes.size() - format::kBatchHeaderSize);
  format::EncodeBatchHeader(h, bytes.data());
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

}  // namespace tokenfeed::log::testing
