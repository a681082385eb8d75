// ShardSpec: which share of an ingest's input files this process reads
// ("--shard I/N"). A plain value type; SourceSet (src/text/) applies it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tokenfeed/status.h"

namespace tokenfeed::text {

// "--shard I/N": this process reads the files whose index in the full sorted
// list is I modulo N (0 <= I < N). Whole files go to one shard, so shards
// never overlap and each resumes on its own.
struct ShardSpec {
  uint32_t index = 0;
  uint32_t count = 1;

  // Parses "I/N". InvalidArgument with the accepted form otherwise.
  static Result<ShardSpec> Parse(std::string_view text);
  std::string ToString() const;
  bool Contains(uint64_t file_index) const { return file_index % count == index; }
};

}  // namespace tokenfeed::text
