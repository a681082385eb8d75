#include "text/path_glob.h"

#include <filesystem>
#include <system_error>

namespace tokenfeed::text {
namespace {

namespace fs = std::filesystem;

std::vector<std::string_view> SplitComponents(std::string_view path) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > start) parts.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

// Length of the UTF-8 character at s[i] (1 for a stray byte).
size_t CharLength(std::string_view s, size_t i) {
  size_t n = 1;
  while (i + n < s.size() && (static_cast<unsigned char>(s[i + n]) & 0xC0) == 0x80 && n < 4) ++n;
  return n;
}

bool MatchFrom(std::string_view pattern, size_t p, std::string_view name, size_t n) {
  // Iterative matcher with one backtrack point for the last '*': linear in
  // practice and never recursive, whatever the pattern.
  size_t star_p = std::string_view::npos, star_n = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star_p = p++;
      star_n = n;
    } else if (p < pattern.size() && pattern[p] == '?') {
      ++p;
      n += CharLength(name, n);
    } else if (p < pattern.size() && pattern[p] == name[n]) {
      ++p;
      ++n;
    } else if (star_p != std::string_view::npos) {
      p = star_p + 1;
      star_n += CharLength(name, star_n);
      n = star_n;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool MatchComponents(const std::vector<std::string_view>& pattern, size_t pi, const std::vector<std::string_view>& path,
                     size_t ni) {
  if (pi == pattern.size()) return ni == path.size();
  if (pattern[pi] == "**") {
    for (size_t skip = ni; skip <= path.size(); ++skip) {
      if (skip > ni && path[skip - 1].front() == '.') return false;  // ** does not enter hidden directories
      if (MatchComponents(pattern, pi + 1, path, skip)) return true;
    }
    return false;
  }
  if (ni == path.size() || !MatchGlobComponent(pattern[pi], path[ni])) return false;
  return MatchComponents(pattern, pi + 1, path, ni + 1);
}

bool IsHidden(std::string_view name) { return !name.empty() && name.front() == '.'; }

class GlobWalker {
 public:
  explicit GlobWalker(std::vector<std::string_view> parts) : parts_(std::move(parts)) {}

  Status Walk(const fs::path& dir, size_t index, bool dir_is_base) {
    if (index == parts_.size()) return Status::OK();
    std::string_view part = parts_[index];
    const bool last = index + 1 == parts_.size();
    if (part == "**" && last) {
      // A trailing `**` (zero or more directories, then anything): every
      // file at this level and below.
      return ForEachEntry(dir, dir_is_base, [&](const fs::directory_entry& entry, std::string_view) -> Status {
        std::error_code ec;
        if (entry.is_directory(ec)) {
          if (entry.is_symlink(ec)) return Status::OK();
          return Walk(entry.path(), index, false);
        }
        return Visit(entry.path(), index, /*last=*/true);
      });
    }
    if (part == "**") {
      TF_RETURN_IF_ERROR(Walk(dir, index + 1, dir_is_base));
      return ForEachEntry(dir, dir_is_base, [&](const fs::directory_entry& entry, std::string_view name) -> Status {
        std::error_code ec;
        if (IsHidden(name) || entry.is_symlink(ec) || !entry.is_directory(ec)) return Status::OK();
        return Walk(entry.path(), index, false);
      });
    }
    if (!IsGlob(part)) {
      fs::path child = dir_is_base && dir == "." ? fs::path(std::string(part)) : dir / std::string(part);
      return Visit(child, index, last);
    }
    return ForEachEntry(dir, dir_is_base, [&](const fs::directory_entry& entry, std::string_view name) -> Status {
      if (!MatchGlobComponent(part, name)) return Status::OK();
      return Visit(entry.path(), index, last);
    });
  }

  std::vector<std::string> TakeMatches() { return std::move(matches_); }

 private:
  Status Visit(const fs::path& path, size_t index, bool last) {
    std::error_code ec;
    fs::file_status st = fs::status(path, ec);  // follows symlinks
    if (ec) return Status::OK();                // absent, or a dangling link: no match
    if (last) {
      if (fs::is_regular_file(st)) matches_.push_back(path.string());
      return Status::OK();
    }
    if (fs::is_directory(st)) return Walk(path, index + 1, false);
    return Status::OK();
  }

  template <typename Fn>
  Status ForEachEntry(const fs::path& dir, bool dir_is_base, Fn&& fn) {
    std::error_code ec;
    fs::directory_iterator it(dir, ec);
    if (ec) {
      if (ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory) return Status::OK();
      return Status::IoError("cannot list directory '" + dir.string() + "': " + ec.message() +
                             "; make it readable or leave it out of the inputs");
    }
    for (; it != fs::directory_iterator(); it.increment(ec)) {
      if (ec) {
        return Status::IoError("cannot list directory '" + dir.string() + "': " + ec.message() +
                               "; make it readable or leave it out of the inputs");
      }
      const fs::directory_entry& entry = *it;
      std::string name = entry.path().filename().string();
      if (IsHidden(name)) continue;
      fs::directory_entry shown = entry;
      // "./x" reads worse than "x" in messages and positions.
      if (dir_is_base && dir == ".") shown = fs::directory_entry(fs::path(name), ec);
      TF_RETURN_IF_ERROR(fn(shown, name));
    }
    return Status::OK();
  }

  std::vector<std::string_view> parts_;
  std::vector<std::string> matches_;
};

}  // namespace

bool IsGlob(std::string_view spec) { return spec.find_first_of("*?") != std::string_view::npos; }

bool MatchGlobComponent(std::string_view pattern, std::string_view name) {
  if (IsHidden(name) && !IsHidden(pattern)) return false;
  return MatchFrom(pattern, 0, name, 0);
}

bool MatchGlobPath(std::string_view pattern, std::string_view path) {
  return MatchComponents(SplitComponents(pattern), 0, SplitComponents(path), 0);
}

Result<std::vector<std::string>> ExpandGlob(std::string_view pattern) {
  std::vector<std::string_view> parts = SplitComponents(pattern);
  // The literal directories before the first wildcard are the walk's base.
  size_t first_glob = 0;
  while (first_glob < parts.size() && !IsGlob(parts[first_glob])) ++first_glob;
  fs::path base = !pattern.empty() && pattern.front() == '/' ? fs::path("/") : fs::path(".");
  bool is_base = base == ".";
  for (size_t i = 0; i < first_glob && i + 1 < parts.size(); ++i) {
    base = is_base ? fs::path(std::string(parts[i])) : base / std::string(parts[i]);
    is_base = false;
  }
  size_t start = first_glob < parts.size() ? first_glob : parts.size() - 1;
  if (parts.empty()) return std::vector<std::string>{};
  GlobWalker walker(std::vector<std::string_view>(parts.begin() + static_cast<std::ptrdiff_t>(start), parts.end()));
  TF_RETURN_IF_ERROR(walker.Walk(base, 0, is_base));
  return walker.TakeMatches();
}

}  // namespace tokenfeed::text
