// The Arrow plugin's one S3 client: Arrow's S3FileSystem, made on first use
// and shared by every object read and table file of the process, with the
// standard AWS configuration (credentials chain: environment, the shared
// credentials and config files, AWS_PROFILE; region from AWS_REGION or
// AWS_DEFAULT_REGION or the profile; endpoint from AWS_ENDPOINT_URL_S3 or
// AWS_ENDPOINT_URL, its scheme choosing http or https) and a bounded retry
// strategy (S3RetryPolicy). S3 is initialised once, on first use, and must be
// finalised before the process exits (FinalizeS3Client, through
// FinalizeObjectStore in object_store.h): Arrow's S3 state torn down by static
// destructors, or an Arrow warning written then, crashes the process.
// Plugin-internal: only code built into libtokenfeed_arrow.so includes it.
// Any thread, except FinalizeS3Client, which must not overlap other calls
// (object_store.h: it runs at exit).
#pragma once

#include <arrow/filesystem/filesystem.h>
#include <arrow/io/interfaces.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "text/object_store.h"
#include "tokenfeed/status.h"

namespace tokenfeed::text::arrow_plugin {

// What ListObjects (object_store.h) returns for `uri`.
Status ListS3Objects(const std::string& uri, std::vector<ObjectInfo>* out);

// What an object was when opened, to tell later whether it changed: its
// size and its last-modified time (S3 keeps whole seconds, so a rewrite of
// the same size within the same second goes unseen).
struct S3ObjectVersion {
  uint64_t size = 0;
  int64_t modified_ns = 0;
};

// The object `uri` for ranged reads, and its size. NotFound when there is
// no such object (or it is a prefix).
Status OpenS3File(const std::string& uri, std::shared_ptr<arrow::io::RandomAccessFile>* file, uint64_t* size,
                  S3ObjectVersion* version = nullptr);

// OK while `uri` is still the object `version` describes; IoError saying
// that it changed while being read (or is gone) otherwise, or the lookup's
// own error.
Status CheckS3ObjectUnchanged(const std::string& uri, const S3ObjectVersion& version);

// Drops the shared client and finalises Arrow's S3 support if this plugin
// started it. Later S3 calls fail Unavailable. Idempotent.
void FinalizeS3Client();

}  // namespace tokenfeed::text::arrow_plugin
