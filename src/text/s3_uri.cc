#include "text/s3_uri.h"

#include "text/path_glob.h"

namespace tokenfeed::text {
namespace {

bool BucketNameAllowed(std::string_view b) {
  if (b.size() < 3 || b.size() > 63) return false;
  for (char c : b) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
    if (!ok) return false;
  }
  return b.front() != '.' && b.front() != '-' && b.back() != '.' && b.back() != '-';
}

}  // namespace

bool IsS3Uri(std::string_view spec) { return spec.starts_with(kS3Scheme); }

std::string S3Uri::ToString() const {
  std::string s(kS3Scheme);
  s += bucket;
  if (!key.empty()) s += "/" + key;
  return s;
}

std::string S3Uri::Child(std::string_view child_key) const {
  std::string s(kS3Scheme);
  s += bucket;
  s += "/";
  s += child_key;
  return s;
}

Result<S3Uri> ParseS3Uri(std::string_view uri) {
  auto bad = [&](std::string_view why) {
    return Status::InvalidArgument("input '" + std::string(uri) + "' is not a usable S3 URI: " + std::string(why) +
                                   "; write s3://BUCKET/KEY, s3://BUCKET/PREFIX/ or a glob such as "
                                   "s3://BUCKET/dir/*.jsonl.gz");
  };
  if (!IsS3Uri(uri)) return bad("it does not start with s3://");
  std::string_view rest = uri.substr(kS3Scheme.size());
  const size_t slash = rest.find('/');
  S3Uri out;
  out.bucket = std::string(rest.substr(0, slash));
  if (out.bucket.empty()) return bad("it names no bucket");
  if (!BucketNameAllowed(out.bucket)) {
    return bad("the bucket name '" + out.bucket +
               "' is not one S3 allows (3 to 63 characters of a-z, 0-9, '.' and '-', starting and ending with a "
               "letter or digit)");
  }
  std::string_view key = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
  if (!key.empty() && key.back() == '/') key.remove_suffix(1);
  if (key.empty()) return out;
  size_t start = 0;
  for (;;) {
    const size_t end = key.find('/', start);
    const std::string_view part =
        key.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (part.empty()) return bad("its key has an empty component ('//')");
    if (part == "." || part == "..") return bad("its key has a '" + std::string(part) + "' component");
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  out.key = std::string(key);
  return out;
}

std::string GlobListingPrefix(std::string_view key_pattern) {
  std::string prefix;
  size_t start = 0;
  while (start <= key_pattern.size()) {
    const size_t end = key_pattern.find('/', start);
    const std::string_view part =
        key_pattern.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (IsGlob(part) || end == std::string_view::npos) break;
    if (!prefix.empty()) prefix += '/';
    prefix += part;
    start = end + 1;
  }
  return prefix;
}

bool IsHiddenBelow(std::string_view prefix, std::string_view key) {
  std::string_view below = key;
  if (!prefix.empty()) {
    if (!key.starts_with(prefix)) return false;
    below = key.substr(prefix.size());
    if (!below.empty() && below.front() == '/') below.remove_prefix(1);
  }
  size_t start = 0;
  while (start < below.size()) {
    if (below[start] == '.') return true;
    const size_t end = below.find('/', start);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return false;
}

}  // namespace tokenfeed::text
