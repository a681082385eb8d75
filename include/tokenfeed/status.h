// Status and Result<T>: how every tokenfeed library call reports failure.
// A Status is either OK (no allocation) or a code plus a message that says
// what failed, where (file, line, partition, offset) and what to do about it.
// Library code never throws; the CLI and the Python binding each turn a Status
// into an exit code or an exception in exactly one place.
// Both types are plain values: copy or move them freely between threads.
#pragma once

#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace tokenfeed {

enum class StatusCode : uint8_t {
  kOk = 0,
  kInvalidArgument,   // the caller's input or configuration is wrong
  kNotFound,          // a file, topic, partition or key does not exist
  kAlreadyExists,
  kCorruption,        // stored bytes fail a checksum or do not parse
  kIoError,           // the operating system refused an operation
  kUnsupported,       // valid input that this build does not handle
  kBusy,              // another process holds a lock
  kOutOfRange,        // an offset or index past the end
  kUnavailable,       // a service cannot be reached (try again later)
  kTimedOut,
  kAborted,           // stopped on request (signal, cancellation)
  kResourceExhausted, // disk full, a size limit, a memory budget
  kInternal,          // a bug in tokenfeed: please report it
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() noexcept = default;
  Status(StatusCode code, std::string message);

  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
  static Status Corruption(std::string m) { return {StatusCode::kCorruption, std::move(m)}; }
  static Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
  static Status Unsupported(std::string m) { return {StatusCode::kUnsupported, std::move(m)}; }
  static Status Busy(std::string m) { return {StatusCode::kBusy, std::move(m)}; }
  static Status OutOfRange(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status TimedOut(std::string m) { return {StatusCode::kTimedOut, std::move(m)}; }
  static Status Aborted(std::string m) { return {StatusCode::kAborted, std::move(m)}; }
  static Status ResourceExhausted(std::string m) { return {StatusCode::kResourceExhausted, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
  // An I/O error from errno, naming the operation and the path.
  static Status FromErrno(int err, std::string_view operation, std::string_view path);

  bool ok() const noexcept { return rep_ == nullptr; }
  StatusCode code() const noexcept { return rep_ ? rep_->code : StatusCode::kOk; }
  const std::string& message() const noexcept;
  // "Corruption: <message>", or "OK".
  std::string ToString() const;
  // The same status with "context: " put before its message.
  Status WithContext(std::string_view context) const;

  bool IsNotFound() const noexcept { return code() == StatusCode::kNotFound; }
  bool IsCorruption() const noexcept { return code() == StatusCode::kCorruption; }

 private:
  struct Rep {
    StatusCode code;
    std::string message;
  };
  std::shared_ptr<const Rep> rep_;  // null when OK: the OK path never allocates
};

// A value or the Status that says why there is none.
template <typename T>
class [[nodiscard]] Result {
  static_assert(!std::is_same_v<std::remove_cv_t<T>, Status>, "Result<Status> makes no sense");

 public:
  Result(T value) : has_value_(true) { new (&value_) T(std::move(value)); }  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {                       // NOLINT: implicit by design
    if (status_.ok()) status_ = Status::Internal("Result constructed from an OK status without a value");
  }
  Result(const Result& other) : status_(other.status_), has_value_(other.has_value_) {
    if (has_value_) new (&value_) T(other.value_);
  }
  Result(Result&& other) noexcept(std::is_nothrow_move_constructible_v<T>)
      : status_(std::move(other.status_)), has_value_(other.has_value_) {
    if (has_value_) new (&value_) T(std::move(other.value_));
  }
  Result& operator=(Result other) {
    Reset();
    status_ = std::move(other.status_);
    has_value_ = other.has_value_;
    if (has_value_) new (&value_) T(std::move(other.value_));
    return *this;
  }
  ~Result() { Reset(); }

  bool ok() const noexcept { return has_value_; }
  const Status& status() const& noexcept { return status_; }
  Status status() && { return std::move(status_); }

  T& value() & { return value_; }
  const T& value() const& { return value_; }
  T&& value() && { return std::move(value_); }
  T& operator*() & { return value_; }
  const T& operator*() const& { return value_; }
  T&& operator*() && { return std::move(value_); }
  T* operator->() { return &value_; }
  const T* operator->() const { return &value_; }

 private:
  void Reset() {
    if (has_value_) value_.~T();
    has_value_ = false;
  }

  Status status_;
  bool has_value_ = false;
  union {
    T value_;
  };
};

}  // namespace tokenfeed

#define TF_STATUS_CONCAT_INNER_(a, b) a##b
#define TF_STATUS_CONCAT_(a, b) TF_STATUS_CONCAT_INNER_(a, b)

// Returns the Status of `expr` from the enclosing function when it is not OK.
#define TF_RETURN_IF_ERROR(expr)                         \
  do {                                                   \
    ::tokenfeed::Status tf_status_ = (expr);             \
    if (!tf_status_.ok()) return tf_status_;             \
  } while (0)

// `TF_ASSIGN_OR_RETURN(auto x, Foo());` assigns the value of a Result or
// returns its Status from the enclosing function.
#define TF_ASSIGN_OR_RETURN(lhs, expr) \
  TF_ASSIGN_OR_RETURN_IMPL_(TF_STATUS_CONCAT_(tf_result_, __LINE__), lhs, expr)
#define TF_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return std::move(tmp).status();  \
  lhs = std::move(tmp).value()
