// Reading a loader state file (what a checkpoint saved: Loader::State, or
// TokenDataset.state_dict() written as JSON) for `replay` and `seen`.
// Only reads the bytes; the state's form is the loader's to check.
#pragma once

#include <string>

#include "tokenfeed/status.h"

namespace tokenfeed::cli {

// The state's JSON: the file's text, or, for a TokenDataset.state_dict()
// saved as JSON ({"tokenfeed_loader": STATE}), the STATE in it. NotFound or
// IoError naming the path; InvalidArgument for an empty file or one over
// 64 MiB (a state is a few KB).
Result<std::string> ReadStateFile(const std::string& path);

}  // namespace tokenfeed::cli
