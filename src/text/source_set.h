// SourceSet: the ordered, de-duplicated, sharded list of corpus files that
// an ingest reads. Specs are files, directories (every non-hidden regular
// file below, recursively) and globs (path_glob.h), and their counterparts in
// S3 (s3_uri.h, object_store.h): an object "s3://bucket/key", a prefix (every
// non-hidden object below it) and a glob over keys, kept as URIs (their
// resolved path is the URI itself); the result is sorted by
// the bytes of each file's resolved path (ResolvedPath), whatever the order
// of the specs and however they are spelled (relative from any directory,
// absolute, through a link), so two runs over the same tree see the same
// files in the same order. Paths are kept as spelled. It opens no file for
// reading beyond a readability check. An immutable value: share it freely.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenfeed/shard_spec.h"
#include "tokenfeed/status.h"

namespace tokenfeed::text {

// A path as the order compares it: absolute, with symbolic links and "." /
// ".." resolved where the file exists (lexically normalised where it does
// not), so that one file named in different ways is one path.
std::string ResolvedPath(const std::string& path);

struct SourceFile {
  std::string path;          // as it will appear in positions and messages (lexically normalised)
  uint64_t size_bytes = 0;   // on disk (or stored, for an object), at expansion time
  uint32_t global_index = 0; // index in the full sorted list, before sharding
};

class SourceSet {
 public:
  // Expands `specs`. NotFound naming the spec when a path or object does not
  // exist, or a directory, prefix or glob yields no file; Unsupported for an
  // "s3://" spec in a build without the Arrow plugin; InvalidArgument for a spec that is
  // neither a regular file nor a directory (a FIFO, a socket, a device: they
  // cannot be re-read on resume); IoError naming the file when a file of this
  // shard cannot be opened for reading. The same file reached twice (two
  // specs, or two names of one inode) is kept once, under the name that
  // comes first in the order.
  static Result<SourceSet> Expand(const std::vector<std::string>& specs, ShardSpec shard = {});

  // A set from paths already known, in the order given (tests, tools).
  static SourceSet FromPaths(std::vector<std::string> paths);
  // A set of sources that are not files (an Arrow C stream), by the names
  // their documents' positions give; nothing is looked up, sizes are 0.
  static SourceSet FromNames(std::vector<std::string> names);

  // This shard's files, in order. A shard can be empty when there are fewer
  // files than shards.
  const std::vector<SourceFile>& files() const { return files_; }
  size_t total_files() const { return total_files_; }  // before sharding
  ShardSpec shard() const { return shard_; }

 private:
  std::vector<SourceFile> files_;
  size_t total_files_ = 0;
  ShardSpec shard_;
};

}  // namespace tokenfeed::text
