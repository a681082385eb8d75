#include "text/source_set.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <set>
#include <system_error>
#include <utility>

#include "text/object_store.h"
#include "text/path_glob.h"
#include "text/s3_uri.h"

namespace tokenfeed::text {
namespace {

namespace fs = std::filesystem;

struct Found {
  std::string path;
  std::string resolved;  // ResolvedPath(path): the sort key
  uint64_t size = 0;
  // One file reached twice has one identity: "device:inode" for a local
  // file, the URI for an object.
  std::string identity;
};

std::string Normalise(std::string_view spec) {
  std::string s = fs::path(spec).lexically_normal().string();
  // "dir/" normalises to "dir/"; a trailing slash would double in children.
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s.empty() ? std::string(".") : s;
}

Status StatFile(const std::string& path, Found* out) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return Status::FromErrno(errno, "cannot stat input", path);
  out->path = path;
  out->resolved = ResolvedPath(path);
  out->size = static_cast<uint64_t>(st.st_size);
  out->identity = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  return Status::OK();
}

Status WalkDirectory(const fs::path& dir, std::vector<Found>* out) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  auto list_error = [&] {
    return Status::IoError("cannot list directory '" + dir.string() + "': " + ec.message() +
                           "; make it readable or leave it out of the inputs");
  };
  if (ec) return list_error();
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) return list_error();
    const fs::directory_entry& entry = *it;
    std::string name = entry.path().filename().string();
    if (!name.empty() && name.front() == '.') continue;  // hidden: .git, editor files
    std::error_code type_ec;
    // Directory links are not followed: a link cycle would never end.
    if (entry.is_symlink(type_ec) && entry.is_directory(type_ec)) continue;
    if (entry.is_directory(type_ec)) {
      TF_RETURN_IF_ERROR(WalkDirectory(entry.path(), out));
    } else if (entry.is_regular_file(type_ec)) {
      Found f;
      TF_RETURN_IF_ERROR(StatFile(entry.path().string(), &f));
      out->push_back(std::move(f));
    }
    // FIFOs, sockets and devices inside a directory are passed over.
  }
  return Status::OK();
}

Found FoundObject(ObjectInfo object) {
  Found f;
  f.resolved = object.uri;
  f.identity = object.uri;
  f.path = std::move(object.uri);
  f.size = object.size_bytes;
  return f;
}

// An "s3://" spec: one object, every object below a prefix (hidden keys
// passed over, as in a directory), or the objects whose keys match a glob.
Status ExpandObjectSpec(const std::string& raw, std::vector<Found>* out) {
  TF_ASSIGN_OR_RETURN(S3Uri uri, ParseS3Uri(raw));
  if (IsGlob(uri.key)) {
    S3Uri listed = uri;
    listed.key = GlobListingPrefix(uri.key);
    // With a trailing '/': the objects below only, even if an object has
    // the prefix itself as its key.
    Result<std::vector<ObjectInfo>> below = ListObjects(listed.ToString() + (listed.key.empty() ? "" : "/"));
    if (!below.ok() && !below.status().IsNotFound()) return below.status();
    size_t before = out->size();
    if (below.ok()) {
      const size_t key_start = listed.ToString().size() - listed.key.size();
      for (ObjectInfo& object : *below) {
        const std::string_view key = std::string_view(object.uri).substr(key_start);
        if (MatchGlobPath(uri.key, key)) out->push_back(FoundObject(std::move(object)));
      }
    }
    if (out->size() == before) {
      return Status::NotFound("input pattern '" + raw + "' matches no object" +
                              (below.ok() ? "" : " (" + below.status().message() + ")") +
                              "; check the pattern, the bucket and the endpoint");
    }
    return Status::OK();
  }
  // Errors name the spec as given.
  TF_ASSIGN_OR_RETURN(std::vector<ObjectInfo> objects, ListObjects(raw));
  const size_t before = out->size();
  const size_t key_start = kS3Scheme.size() + uri.bucket.size() + 1;
  for (ObjectInfo& object : objects) {
    // The object named itself is read, hidden or not.
    const bool named = object.uri == uri.ToString();
    if (!named && IsHiddenBelow(uri.key, std::string_view(object.uri).substr(key_start))) continue;
    out->push_back(FoundObject(std::move(object)));
  }
  if (out->size() == before) {
    return Status::NotFound("input prefix '" + raw + "' holds no object (hidden keys are skipped)");
  }
  return Status::OK();
}

Status ExpandSpec(const std::string& raw, std::vector<Found>* out) {
  if (IsS3Uri(raw)) return ExpandObjectSpec(raw, out);
  std::string spec = Normalise(raw);
  if (IsGlob(spec)) {
    TF_ASSIGN_OR_RETURN(std::vector<std::string> matches, ExpandGlob(spec));
    if (matches.empty()) {
      return Status::NotFound("input pattern '" + raw + "' matches no file; check the pattern and the directory");
    }
    for (std::string& m : matches) {
      Found f;
      TF_RETURN_IF_ERROR(StatFile(Normalise(m), &f));
      out->push_back(std::move(f));
    }
    return Status::OK();
  }
  struct stat st;
  if (::stat(spec.c_str(), &st) != 0) {
    int err = errno;
    if (err == ENOENT || err == ENOTDIR) {
      return Status::NotFound("input '" + raw + "' does not exist; check the path");
    }
    return Status::FromErrno(err, "cannot stat input", raw);
  }
  if (S_ISDIR(st.st_mode)) {
    size_t before = out->size();
    TF_RETURN_IF_ERROR(WalkDirectory(spec, out));
    if (out->size() == before) {
      return Status::NotFound("input directory '" + raw + "' holds no regular file (hidden files are skipped)");
    }
    return Status::OK();
  }
  if (!S_ISREG(st.st_mode)) {
    return Status::InvalidArgument("input '" + raw +
                                   "' is not a regular file or directory (a FIFO, socket or device cannot be read "
                                   "again on resume); copy the data into a file");
  }
  Found f;
  TF_RETURN_IF_ERROR(StatFile(spec, &f));
  out->push_back(std::move(f));
  return Status::OK();
}

Status CheckReadable(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    Status s = Status::FromErrno(errno, "cannot open input", path);
    return Status(s.code(), s.message() + "; make the file readable or leave it out of the inputs");
  }
  ::close(fd);
  return Status::OK();
}

}  // namespace

std::string ResolvedPath(const std::string& path) {
  if (IsS3Uri(path)) return path;  // an object has one name
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) return fs::path(path).lexically_normal().string();
  return p.string();
}

Result<ShardSpec> ShardSpec::Parse(std::string_view text) {
  auto bad = [&] {
    return Status::InvalidArgument("shard '" + std::string(text) +
                                   "' is not of the form I/N with 0 <= I < N (for example 0/4 .. 3/4)");
  };
  size_t slash = text.find('/');
  if (slash == std::string_view::npos) return bad();
  ShardSpec spec;
  auto parse = [](std::string_view s, uint32_t* v) {
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
    return ec == std::errc() && ptr == s.data() + s.size() && !s.empty();
  };
  if (!parse(text.substr(0, slash), &spec.index) || !parse(text.substr(slash + 1), &spec.count)) return bad();
  if (spec.count == 0 || spec.index >= spec.count) return bad();
  return spec;
}

std::string ShardSpec::ToString() const { return std::to_string(index) + "/" + std::to_string(count); }

Result<SourceSet> SourceSet::Expand(const std::vector<std::string>& specs, ShardSpec shard) {
  if (shard.count == 0 || shard.index >= shard.count) {
    return Status::InvalidArgument("shard " + shard.ToString() + " is out of range: need 0 <= I < N");
  }
  if (specs.empty()) return Status::InvalidArgument("no input given; name files, directories or globs");
  std::vector<Found> found;
  for (const std::string& spec : specs) TF_RETURN_IF_ERROR(ExpandSpec(spec, &found));

  // By the resolved path, so that the order (and with it the documents'
  // sequence numbers, the shards and an ingest's fingerprint) does not depend
  // on how the inputs were named; the spelling only breaks a tie (two names
  // that resolve alike, such as a link to a file beside it).
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
    return a.resolved != b.resolved ? a.resolved < b.resolved : a.path < b.path;
  });
  std::set<std::string> seen;
  SourceSet set;
  set.shard_ = shard;
  uint32_t index = 0;
  for (Found& f : found) {
    if (!seen.insert(f.identity).second) continue;
    if (shard.Contains(index)) set.files_.push_back(SourceFile{std::move(f.path), f.size, index});
    ++index;
  }
  set.total_files_ = index;
  // An object's access is checked by its first read, which names it.
  for (const SourceFile& file : set.files_) {
    if (!IsS3Uri(file.path)) TF_RETURN_IF_ERROR(CheckReadable(file.path));
  }
  return set;
}

SourceSet SourceSet::FromNames(std::vector<std::string> names) {
  SourceSet set;
  for (std::string& n : names) {
    set.files_.push_back(SourceFile{std::move(n), 0, static_cast<uint32_t>(set.files_.size())});
  }
  set.total_files_ = set.files_.size();
  return set;
}

SourceSet SourceSet::FromPaths(std::vector<std::string> paths) {
  SourceSet set;
  for (std::string& p : paths) {
    uint64_t size = 0;
    struct stat st;
    if (::stat(p.c_str(), &st) == 0) size = static_cast<uint64_t>(st.st_size);
    set.files_.push_back(SourceFile{std::move(p), size, static_cast<uint32_t>(set.files_.size())});
  }
  set.total_files_ = set.files_.size();
  return set;
}

}  // namespace tokenfeed::text
