// The ranges of LoaderOptions' whole numbers (include/tokenfeed/loader.h):
// one table, read by ValidateLoaderOptions and by the Python binding.
#include <string>

#include "tokenfeed/loader.h"

namespace tokenfeed {
namespace {

struct NamedRange {
  std::string_view name;
  LoaderOptionRange range;
};

constexpr NamedRange kRanges[] = {
    {"seq_len", {1, uint64_t{1} << 24}},
    {"batch_size", {1, uint64_t{1} << 16}},
    {"world_size", {1, uint64_t{1} << 20}},
    {"block_records", {0, uint64_t{1} << 24}},
    {"window_blocks", {1, uint64_t{1} << 16}},
    {"shards", {1, uint64_t{1} << 16}},
    {"follow_timeout_ms", {1, uint64_t{24} * 3600 * 1000}},
    {"prefetch_batches", {1, 1024}},
    {"memory_budget_bytes", {1, uint64_t{1} << 50}},
    {"kafka_timeout_ms", {1, uint64_t{24} * 3600 * 1000}},
    {"metrics_port", {0, 65535}},
};

}  // namespace

std::optional<LoaderOptionRange> FindLoaderOptionRange(std::string_view name) {
  for (const NamedRange& r : kRanges) {
    if (r.name == name) return r.range;
  }
  return std::nullopt;
}

Status LoaderOptionOutOfRange(std::string_view name, LoaderOptionRange range, std::string_view value) {
  return Status::InvalidArgument(std::string(name) + " must be between " + std::to_string(range.lo) + " and " +
                                 std::to_string(range.hi) + ", not " + std::string(value));
}

}  // namespace tokenfeed
