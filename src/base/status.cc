#include "tokenfeed/status.h"

#include <cstring>

namespace tokenfeed {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalidArgument: return "Invalid argument";
    case StatusCode::kNotFound: return "Not found";
    case StatusCode::kAlreadyExists: return "Already exists";
    case StatusCode::kCorruption: return "Corruption";
    case StatusCode::kIoError: return "I/O error";
    case StatusCode::kUnsupported: return "Unsupported";
    case StatusCode::kBusy: return "Busy";
    case StatusCode::kOutOfRange: return "Out of range";
    case StatusCode::kUnavailable: return "Unavailable";
    case StatusCode::kTimedOut: return "Timed out";
    case StatusCode::kAborted: return "Aborted";
    case StatusCode::kResourceExhausted: return "Resource exhausted";
    case StatusCode::kInternal: return "Internal error";
  }
  return "Unknown status";
}

Status::Status(StatusCode code, std::string message) {
  if (code != StatusCode::kOk) rep_ = std::make_shared<const Rep>(Rep{code, std::move(message)});
}

Status Status::FromErrno(int err, std::string_view operation, std::string_view path) {
  std::string m;
  m.append(operation).append(" '").append(path).append("': ").append(std::strerror(err));
  StatusCode code = StatusCode::kIoError;
  if (err == ENOENT) code = StatusCode::kNotFound;
  if (err == ENOSPC || err == EDQUOT) code = StatusCode::kResourceExhausted;
  if (err == EEXIST) code = StatusCode::kAlreadyExists;
  return Status(code, std::move(m));
}

const std::string& Status::message() const noexcept {
  static const std::string kEmpty;
  return rep_ ? rep_->message : kEmpty;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string s(StatusCodeName(rep_->code));
  s.append(": ").append(rep_->message);
  return s;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  std::string m(context);
  m.append(": ").append(rep_->message);
  return Status(rep_->code, std::move(m));
}

}  // namespace tokenfeed
