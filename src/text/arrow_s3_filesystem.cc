// The shared S3FileSystem of the Arrow plugin (arrow_s3_filesystem.h), its
// configuration from the AWS environment, and Arrow's errors as tokenfeed
// Statuses naming the URI.
#include "text/arrow_s3_filesystem.h"

#include <arrow/filesystem/s3fs.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string_view>

#include "text/s3_retry_policy.h"
#include "text/s3_uri.h"

namespace tokenfeed::text::arrow_plugin {
namespace {

class BoundedRetryStrategy final : public arrow::fs::S3RetryStrategy {
 public:
  bool ShouldRetry(const AWSErrorDetail& error, int64_t attempted_retries) override {
    return S3RetryPolicy::ShouldRetry(error.should_retry, attempted_retries);
  }
  int64_t CalculateDelayBeforeNextRetry(const AWSErrorDetail& /*error*/, int64_t attempted_retries) override {
    return S3RetryPolicy::DelayMs(attempted_retries);
  }
};

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

struct Shared {
  std::mutex mu;
  std::shared_ptr<arrow::fs::FileSystem> fs;
  std::string endpoint;  // for messages: "http://127.0.0.1:9000", or "AWS (region R)"
  Status error;          // why it could not be made, without a URI (kept: the environment does not change)
  bool tried = false;
  bool initialized_here = false;  // this plugin started Arrow's S3 support (and so finalises it)
};

Shared& TheShared() {
  static Shared* shared = new Shared;  // never destroyed: the atexit handler may run after statics
  return *shared;
}

// Errors name no URI: FileSystem adds the one asked for.
Status MakeFileSystem(Shared& s) {
  arrow::fs::S3GlobalOptions global = arrow::fs::S3GlobalOptions::Defaults();
  if (std::getenv("ARROW_S3_LOG_LEVEL") == nullptr) global.log_level = arrow::fs::S3LogLevel::Fatal;
  // Another user of the same Arrow in this process (pyarrow) may have done it.
  if (!arrow::fs::IsS3Initialized()) {
    if (arrow::fs::IsS3Finalized()) return Status::Unavailable("S3 was already shut down in this process (at exit)");
    arrow::Status init = arrow::fs::InitializeS3(global);
    if (!init.ok()) return Status::IoError("cannot start the S3 client: " + init.ToString());
    s.initialized_here = true;
  }

  arrow::fs::S3Options options = arrow::fs::S3Options::Defaults();  // the AWS credentials chain
  std::string region = Env("AWS_REGION");
  if (region.empty()) region = Env("AWS_DEFAULT_REGION");
  std::string endpoint = Env("AWS_ENDPOINT_URL_S3");
  if (endpoint.empty()) endpoint = Env("AWS_ENDPOINT_URL");
  if (!endpoint.empty()) {
    // A user name or password in the URL is refused without being shown.
    if (endpoint.find('@') != std::string::npos) {
      return Status::InvalidArgument(
          "the endpoint in AWS_ENDPOINT_URL holds a user name or password ('@'); give SCHEME://HOST[:PORT] "
          "there and the credentials through AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or a profile");
    }
    std::string_view rest = endpoint;
    std::string scheme = "https";
    if (const size_t sep = rest.find("://"); sep != std::string_view::npos) {
      scheme = std::string(rest.substr(0, sep));
      rest.remove_prefix(sep + 3);
    }
    if (scheme != "http" && scheme != "https") {
      return Status::InvalidArgument("the endpoint '" + endpoint +
                                     "' (AWS_ENDPOINT_URL) is not an http:// or https:// URL");
    }
    while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
    if (rest.empty() || rest.find('/') != std::string_view::npos) {
      return Status::InvalidArgument("the endpoint '" + endpoint +
                                     "' (AWS_ENDPOINT_URL) must be SCHEME://HOST[:PORT] without a path");
    }
    options.endpoint_override = std::string(rest);
    options.scheme = scheme;
    // An S3-compatible server answers in any region; the SDK needs one named.
    if (region.empty()) region = "us-east-1";
    s.endpoint = scheme + "://" + std::string(rest);
  } else {
    s.endpoint = "AWS S3";
  }
  if (!region.empty()) options.region = region;
  // A stalled transfer is cut by the SDK's low-speed limit on Linux (Arrow's
  // request_timeout applies to Windows and macOS only), then retried.
  options.connect_timeout = 5;
  options.retry_strategy = std::make_shared<BoundedRetryStrategy>();
  auto made = arrow::fs::S3FileSystem::Make(options);
  if (!made.ok()) return Status::IoError("cannot start the S3 client: " + made.status().ToString());
  s.fs = *made;
  return Status::OK();
}

Result<std::shared_ptr<arrow::fs::FileSystem>> FileSystem(const std::string& uri, std::string* endpoint) {
  Shared& s = TheShared();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.tried) {
    s.tried = true;
    s.error = MakeFileSystem(s);
  }
  if (!s.error.ok()) return Status(s.error.code(), "'" + uri + "': " + s.error.message());
  if (!s.fs) return Status::Unavailable("'" + uri + "': S3 was already shut down in this process (at exit)");
  *endpoint = s.endpoint;
  return s.fs;
}

// Arrow's error for a request on `uri`, with the endpoint and what to check.
Status FromArrowS3(const arrow::Status& st, const std::string& uri, std::string_view doing,
                   const std::string& endpoint) {
  const std::string m = st.ToString();
  std::string advice;
  auto has = [&](std::string_view word) { return m.find(word) != std::string::npos; };
  if (has("ACCESS_DENIED") || has("AccessDenied") || has("InvalidAccessKeyId") || has("SignatureDoesNotMatch")) {
    advice = "access denied: check the credentials (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_PROFILE)";
  } else if (has("curlCode") || has("NETWORK_CONNECTION")) {
    advice = "the endpoint did not answer after " + std::to_string(S3RetryPolicy::kMaxRetries + 1) +
             " attempts: check AWS_ENDPOINT_URL and the network";
  } else {
    advice = "check the URI, the credentials and the endpoint";
  }
  return Status::IoError("'" + uri + "': " + std::string(doing) + " at " + endpoint + " failed: " + m + "; " +
                         advice);
}

std::string ArrowPath(const S3Uri& u) { return u.key.empty() ? u.bucket : u.bucket + "/" + u.key; }

// NotFound for `uri`, saying whether its bucket exists.
Status Missing(arrow::fs::FileSystem& fs, const S3Uri& u, const std::string& uri, const std::string& endpoint,
               std::string_view what) {
  auto bucket = fs.GetFileInfo(u.bucket);
  if (bucket.ok() && bucket->type() == arrow::fs::FileType::NotFound) {
    return Status::NotFound("input '" + uri + "': the bucket '" + u.bucket + "' does not exist at " + endpoint +
                            "; check the bucket name and AWS_ENDPOINT_URL");
  }
  return Status::NotFound("input '" + uri + "': no " + std::string(what) + " at " + endpoint +
                          "; check the key (keys are case-sensitive)");
}

}  // namespace

void FinalizeS3Client() {
  Shared& s = TheShared();
  std::lock_guard<std::mutex> lock(s.mu);
  s.fs.reset();
  // Only what this plugin started: pyarrow's own S3 use in the same process
  // (the same Arrow library) is pyarrow's to end.
  if (s.initialized_here && arrow::fs::IsS3Initialized()) (void)arrow::fs::EnsureS3Finalized();
  s.initialized_here = false;
  s.tried = true;  // no client after this
}

Status ListS3Objects(const std::string& uri, std::vector<ObjectInfo>* out) {
  TF_ASSIGN_OR_RETURN(S3Uri u, ParseS3Uri(uri));
  std::string endpoint;
  TF_ASSIGN_OR_RETURN(std::shared_ptr<arrow::fs::FileSystem> fs, FileSystem(uri, &endpoint));
  const std::string path = ArrowPath(u);
  // "s3://B/K/" asks for the objects below K only, even if K is an object too.
  const bool below_only = !u.key.empty() && uri.back() == '/';
  arrow::fs::FileType type = arrow::fs::FileType::Directory;
  if (!below_only) {
    auto info = fs->GetFileInfo(path);
    if (!info.ok()) return FromArrowS3(info.status(), uri, "looking it up", endpoint);
    type = info->type();
    if (type == arrow::fs::FileType::File) {
      out->push_back(ObjectInfo{u.ToString(), static_cast<uint64_t>(std::max<int64_t>(info->size(), 0))});
      return Status::OK();
    }
  }
  switch (type) {
    case arrow::fs::FileType::Directory: {
      arrow::fs::FileSelector selector;
      selector.base_dir = path;
      selector.recursive = true;
      selector.allow_not_found = below_only;
      auto listed = fs->GetFileInfo(selector);
      if (!listed.ok()) return FromArrowS3(listed.status(), uri, "listing the objects below it", endpoint);
      std::vector<ObjectInfo> found;
      for (const arrow::fs::FileInfo& f : *listed) {
        if (f.type() != arrow::fs::FileType::File) continue;  // prefixes and directory markers
        found.push_back(ObjectInfo{std::string(kS3Scheme) + f.path(),
                                   static_cast<uint64_t>(std::max<int64_t>(f.size(), 0))});
      }
      std::sort(found.begin(), found.end(),
                [](const ObjectInfo& a, const ObjectInfo& b) { return a.uri < b.uri; });
      if (found.empty()) return Missing(*fs, u, uri, endpoint, "object below this prefix");
      out->insert(out->end(), found.begin(), found.end());
      return Status::OK();
    }
    default:
      return Missing(*fs, u, uri, endpoint, "object or prefix");
  }
}

Status OpenS3File(const std::string& uri, std::shared_ptr<arrow::io::RandomAccessFile>* file, uint64_t* size,
                  S3ObjectVersion* version) {
  TF_ASSIGN_OR_RETURN(S3Uri u, ParseS3Uri(uri));
  std::string endpoint;
  TF_ASSIGN_OR_RETURN(std::shared_ptr<arrow::fs::FileSystem> fs, FileSystem(uri, &endpoint));
  auto info = fs->GetFileInfo(ArrowPath(u));
  if (!info.ok()) return FromArrowS3(info.status(), uri, "looking it up", endpoint);
  if (info->type() == arrow::fs::FileType::Directory) {
    return Status::NotFound("input '" + uri + "' is a prefix, not an object; name an object, or give the prefix "
                            "as an input to read every object below it");
  }
  if (info->type() != arrow::fs::FileType::File) return Missing(*fs, u, uri, endpoint, "object");
  auto opened = fs->OpenInputFile(*info);
  if (!opened.ok()) return FromArrowS3(opened.status(), uri, "opening it", endpoint);
  *file = *opened;
  *size = static_cast<uint64_t>(std::max<int64_t>(info->size(), 0));
  if (version != nullptr) *version = S3ObjectVersion{*size, info->mtime().time_since_epoch().count()};
  return Status::OK();
}

Status CheckS3ObjectUnchanged(const std::string& uri, const S3ObjectVersion& version) {
  TF_ASSIGN_OR_RETURN(S3Uri u, ParseS3Uri(uri));
  std::string endpoint;
  TF_ASSIGN_OR_RETURN(std::shared_ptr<arrow::fs::FileSystem> fs, FileSystem(uri, &endpoint));
  auto info = fs->GetFileInfo(ArrowPath(u));
  if (!info.ok()) return FromArrowS3(info.status(), uri, "looking it up again", endpoint);
  if (info->type() != arrow::fs::FileType::File) {
    return Status::IoError("'" + uri + "': the object was deleted from " + endpoint + " while being read");
  }
  const auto size = static_cast<uint64_t>(std::max<int64_t>(info->size(), 0));
  const int64_t modified = info->mtime().time_since_epoch().count();
  if (size != version.size || modified != version.modified_ns) {
    return Status::IoError("'" + uri + "': the object changed while being read (" + std::to_string(version.size) +
                           " bytes when opened, " + std::to_string(size) + " now" +
                           (modified != version.modified_ns ? ", modified since" : "") +
                           "); the documents read before this point are those of the version opened");
  }
  return Status::OK();
}

}  // namespace tokenfeed::text::arrow_plugin
