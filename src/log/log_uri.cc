#include <string>

#include "base/file_system.h"
#include "log/log.h"

namespace tokenfeed::log {

namespace {

constexpr std::string_view kScheme = "log:";
constexpr size_t kMaxTopicName = 200;

bool IsTopicChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-';
}

}  // namespace

std::string LogUri::path() const { return dir == "." ? topic : JoinPath(dir, topic); }

Result<LogUri> ParseLogUri(std::string_view uri) {
  const std::string shown(uri);
  if (!uri.starts_with(kScheme)) {
    return Status::InvalidArgument("'" + shown + "' is not an embedded log URI: expected log:DIR/TOPIC, e.g. "
                                   "log:/data/topics/c4");
  }
  std::string_view rest = uri.substr(kScheme.size());
  while (rest.size() > 1 && rest.back() == '/') rest.remove_suffix(1);
  if (rest.empty() || rest == "/") {
    return Status::InvalidArgument("'" + shown + "' names no topic: expected log:DIR/TOPIC");
  }
  LogUri out;
  out.topic = BaseName(rest);
  out.dir = ParentDir(rest);
  const std::string& t = out.topic;
  bool ok = !t.empty() && t.size() <= kMaxTopicName && t[0] != '.';
  for (char c : t) ok = ok && IsTopicChar(c);
  if (!ok) {
    return Status::InvalidArgument("'" + shown + "': the topic name '" + t +
                                   "' must be 1 to 200 characters of A-Z a-z 0-9 . _ - and not start with '.'");
  }
  return out;
}

}  // namespace tokenfeed::log
