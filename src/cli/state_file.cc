#include "cli/state_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include <simdjson.h>

namespace tokenfeed::cli {

Result<std::string> ReadStateFile(const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) {
    const int err = errno;
    const std::string why = std::strerror(err);
    if (err == ENOENT) return Status::NotFound("loader state file " + path + ": " + why);
    return Status::IoError("loader state file " + path + ": " + why);
  }
  constexpr size_t kMax = size_t{64} << 20;
  std::string text;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f.get())) > 0) {
    text.append(buf, n);
    if (text.size() > kMax) return Status::InvalidArgument("loader state file " + path + " is over 64 MiB");
  }
  if (std::ferror(f.get())) return Status::IoError("loader state file " + path + ": read error");
  if (text.empty()) return Status::InvalidArgument("loader state file " + path + " is empty");
  // A TokenDataset.state_dict() saved as JSON holds the state under one key.
  simdjson::dom::parser parser;
  simdjson::dom::element root, inner;
  if (!parser.parse(text).get(root) && !root["tokenfeed_loader"].get(inner)) return simdjson::minify(inner);
  return text;
}

}  // namespace tokenfeed::cli
