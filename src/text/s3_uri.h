// S3 URIs for corpus inputs: "s3://BUCKET/KEY", where KEY is an object's key,
// a prefix read like a directory (every object below it), or a glob over keys
// with path_glob.h's wildcards ("s3://b/crawl/**/*.jsonl.gz"). Only the
// parsing and the key arithmetic live here: pure functions over strings, any
// thread. It is not an S3 client (object_store.h reaches the objects).
#pragma once

#include <string>
#include <string_view>

#include "tokenfeed/status.h"

namespace tokenfeed::text {

inline constexpr std::string_view kS3Scheme = "s3://";

// Whether `spec` names S3 (starts with "s3://"), whatever follows.
bool IsS3Uri(std::string_view spec);

struct S3Uri {
  std::string bucket;
  std::string key;  // without a leading or trailing '/'; empty for the whole bucket

  // "s3://BUCKET/KEY" ("s3://BUCKET" for the whole bucket).
  std::string ToString() const;
  // The URI of the key `key` in the same bucket.
  std::string Child(std::string_view key) const;
};

// Parses "s3://BUCKET[/KEY][/]". A trailing '/' is dropped (a prefix reads
// like a directory with or without it). InvalidArgument naming the URI for a
// missing bucket, a bucket name S3 does not allow (3 to 63 of a-z, 0-9, '.',
// '-'), or a key with an empty, "." or ".." component, which a listing could
// never name back.
Result<S3Uri> ParseS3Uri(std::string_view uri);

// For a key pattern with wildcards: the components before the first one with
// a wildcard, joined by '/' ("" when the first has one). Listing the objects
// below it finds every key the pattern can match.
std::string GlobListingPrefix(std::string_view key_pattern);

// Whether `key`, found below the prefix `prefix` ("" for the whole bucket),
// is hidden: a component after the prefix starts with '.', as a directory
// walk skips hidden files and directories.
bool IsHiddenBelow(std::string_view prefix, std::string_view key);

}  // namespace tokenfeed::text
