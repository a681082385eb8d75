// Inside access to BatchBuilder and BatchView for the log's writer and
// readers: the builder's raw bytes (whose header Append fills in) and the
// construction of a view over a validated batch. Not for use outside src/log.
// Same thread-safety and lifetime rules as the types themselves.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "log/log_format.h"
#include "log/log_batch.h"

namespace tokenfeed::log {

struct BatchBuilderAccess {
  // The whole batch: kBatchHeaderSize bytes of header space, then entries.
  static std::span<uint8_t> Bytes(BatchBuilder& b) { return {b.data_.get(), b.size_}; }
};

struct BatchViewAccess {
  // A view of a batch that CheckBatchBody accepted, starting `skip` records in.
  // `marks`, if not empty, are from MarkEntries of the same batch: the walk
  // to the first record starts at the nearest mark.
  static BatchView Make(std::span<const uint8_t> batch, const format::BatchHeader& h, uint32_t skip,
                        std::span<const uint32_t> marks = {});
  // A view of records [skip, end_record) of a batch CheckBatchBody accepted,
  // from a copy of part of it: `part` starts where record `part_record`
  // starts (a multiple of kMarkEvery, from MarkEntries) and ends where
  // record `end_record` starts (or at the batch's end).
  static BatchView MakePart(std::span<const uint8_t> part, uint32_t part_record, uint32_t end_record,
                            const format::BatchHeader& h, uint32_t skip);
  // Where records 0, kMarkEvery, 2 * kMarkEvery, ... start (from the batch's
  // first byte), so that a reader coming back to a batch for a record in its
  // middle need not walk every entry before it (a walk is a cache miss per
  // record).
  static constexpr uint32_t kMarkEvery = 64;
  static std::vector<uint32_t> MarkEntries(std::span<const uint8_t> batch, const format::BatchHeader& h);
};

}  // namespace tokenfeed::log
