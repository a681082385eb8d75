// Inside access to BatchBuilder and BatchView for the log's writer and
// readers: the builder's raw bytes (whose header Append fills in) and the
// construction of a view over a validated batch. Not for use outside src/log.
// Same thread-safety and lifetime rules as the types themselves.
#pragma once

#include <cstdint>
#include <span>

#include "log/log_format.h"
#include "tokenfeed/log_batch.h"

namespace tokenfeed::log {

struct BatchBuilderAccess {
  // The whole batch: kBatchHeaderSize bytes of header space, then entries.
  static std::span<uint8_t> Bytes(BatchBuilder& b) { return {b.data_.get(), b.size_}; }
};

struct BatchViewAccess {
  // A view of a batch that CheckBatchBody accepted, starting `skip` records in.
  static BatchView Make(std::span<const uint8_t> batch, const format::BatchHeader& h, uint32_t skip);
};

}  // namespace tokenfeed::log
