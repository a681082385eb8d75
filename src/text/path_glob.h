// Path globs for input specs: `*` (any run of characters inside one path
// component), `?` (one character), and `**` as a whole component (zero or
// more directories). Every other character is literal; there are no [sets]
// or {alternatives}. As in the shell, a wildcard does not match a leading '.'
// (hidden files and directories), and `**` does not enter them.
// Pure functions over strings and a read-only directory walk; any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tokenfeed/status.h"

namespace tokenfeed::text {

// Whether `spec` has a wildcard and so is a glob rather than a path.
bool IsGlob(std::string_view spec);

// Whether one path component `name` matches one pattern component.
bool MatchGlobComponent(std::string_view pattern, std::string_view name);

// Whether the '/'-separated `path` matches the '/'-separated `pattern`.
bool MatchGlobPath(std::string_view pattern, std::string_view path);

// The regular files (or symbolic links to them) that `pattern` matches, in
// no particular order, possibly with repeats. Directory symlinks are followed
// by literal and `*` components but not by `**` (a link cycle would never
// end). IoError when a directory on the way cannot be read.
Result<std::vector<std::string>> ExpandGlob(std::string_view pattern);

}  // namespace tokenfeed::text
