// ResumePlan: what a topic already holds of this ingest, read from the last
// record of each partition the run writes (no side file that could drift).
// A partition's records are a prefix of what the run assigns to it, so
// "every document whose sequence number is at most the partition's last" is
// exactly what is already there. Built once before the run starts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "text/document_reader.h"
#include "text/source_set.h"
#include "tokenfeed/ids.h"
#include "tokenfeed/status.h"
#include "tokenfeed/topic.h"

namespace tokenfeed::ingest {

struct ResumePlan {
  bool fresh = true;  // the run's partitions are empty
  // By position in the run's partition list: the last doc_seq written there.
  std::vector<std::optional<uint64_t>> last_sequence;
  // Where reading may start without missing anything: the earliest of the
  // partitions' last documents (only when every partition has one).
  std::optional<text::ResumePoint> start;
  uint64_t start_sequence = 0;

  // True when the document is already in its partition.
  bool Written(size_t partition_slot, uint64_t sequence) const {
    const auto& last = last_sequence[partition_slot];
    return last && sequence <= *last;
  }
};

// Reads the last records of `partitions` (in that order). InvalidArgument when
// a record comes from another ingest (its "run" attribute is none of
// `fingerprints`: this run's first, then any older form of it) or from a
// file that is not among `sources`; Corruption when a last record does not
// parse. `from_stream`: the run reads an Arrow stream, which cannot be
// resumed, and the refusal says so instead of asking for the same inputs.
Result<ResumePlan> PlanResume(topic::TopicWriter& writer, const std::vector<PartitionId>& partitions,
                              const std::vector<std::string>& fingerprints, const text::SourceSet& sources,
                              bool from_stream = false);

// An input's path as resuming compares it (text::ResolvedPath, the key the
// inputs are ordered by too): absolute, with symbolic links and "." / ".."
// resolved where the file exists, so that the same file named relatively in
// one run and absolutely (or through a link) in the next is the same input,
// in the same place of the order. Records name their file by this path too,
// so that a resumed run finds it again from any working directory.
std::string ComparablePath(const std::string& path);

}  // namespace tokenfeed::ingest
