// Objects in S3-compatible storage as corpus inputs: listing what an
// "s3://" URI names (one object, or every object below a prefix) with sizes,
// and random access to one object by ranged reads. The client is Apache
// Arrow's S3FileSystem (AWS SDK for C++ inside) in the Arrow plugin,
// libtokenfeed_arrow.so (arrow_plugin_loader.h); credentials, region and
// endpoint come from the standard AWS variables and files, failed requests are
// retried with bounded backoff (arrow_s3_filesystem.h). It is not a writer
// and caches nothing across objects. Without the plugin every call is
// Unsupported, naming the URI and saying how to build with it.
// ObjectReader: one thread at a time; the functions: any thread, but
// FinalizeObjectStore only once no other call is under way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tokenfeed/status.h"

namespace tokenfeed::text {

struct ObjectInfo {
  std::string uri;  // "s3://bucket/key"
  uint64_t size_bytes = 0;
};

// Random access to one object, opened by OpenObject.
class ObjectReader {
 public:
  virtual ~ObjectReader() = default;
  ObjectReader(const ObjectReader&) = delete;
  ObjectReader& operator=(const ObjectReader&) = delete;

  // Reads up to `n` bytes at `offset` with one ranged request (retried on
  // transient failures); fewer than `n` only at the object's end, 0 at or
  // past it. IoError naming the URI, the offset and the reason.
  virtual Result<size_t> ReadAt(uint64_t offset, char* dst, size_t n) = 0;
  // The object's size when it was opened.
  virtual uint64_t size() const = 0;
  // OK while the stored object is still the one opened (same size and
  // modification time); IoError naming the URI when it changed or was
  // deleted since. Reads do not pin a version: callers ask after a failed
  // read and once they reach the end, so that two versions never mix
  // silently.
  virtual Status CheckUnchanged() = 0;
  const std::string& uri() const { return uri_; }

 protected:
  explicit ObjectReader(std::string uri) : uri_(std::move(uri)) {}
  std::string uri_;
};

// Whether this build reaches object storage at all (the plugin is loaded on
// first use).
bool ObjectStoreAvailable();

// What `uri` ("s3://bucket/key", no wildcards) names: the object with that
// key, else every object whose key lies below "key/" (all of a bucket for
// "s3://bucket"), sorted by key; with a trailing '/' ("s3://bucket/key/")
// only the objects below, even when "key" is an object too. NotFound naming the URI (and saying whether
// the bucket itself is missing) when there is none; IoError for access
// denied or an endpoint that did not answer after the retries.
Result<std::vector<ObjectInfo>> ListObjects(const std::string& uri);

// Opens the object `uri` for ranged reads. NotFound when there is no such
// object; IoError as for ListObjects.
Result<std::unique_ptr<ObjectReader>> OpenObject(const std::string& uri);

// Shuts the S3 client down, if one was started: a program that may have read
// from S3 calls it once before it exits, after its last read (the command-line
// program's main does; the Python module at interpreter exit). Arrow's S3
// state must not be left to static destructors (docs/ingest.md, "Object
// storage"). Later S3 calls fail with Unavailable. Loads nothing; idempotent.
void FinalizeObjectStore();

// The plugin's entry points, looked up by these names. Same compiler and
// standard library on both sides (one build makes both).
using ObjectListFunction = Status (*)(const std::string& uri, std::vector<ObjectInfo>* out);
using ObjectOpenFunction = Status (*)(const std::string& uri, std::unique_ptr<ObjectReader>* out);
inline constexpr const char* kObjectListSymbol = "tokenfeed_object_list";
inline constexpr const char* kObjectOpenSymbol = "tokenfeed_object_open";
using ObjectStoreFinalizeFunction = void (*)();
inline constexpr const char* kObjectStoreFinalizeSymbol = "tokenfeed_object_store_finalize";

}  // namespace tokenfeed::text
