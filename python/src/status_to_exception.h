// The one place where a tokenfeed::Status becomes a Python exception. Every
// error tokenfeed raises is a tokenfeed.TokenfeedError, and also the
// built-in exception a Python user would catch for it:
//   InvalidArgument, OutOfRange -> InvalidArgumentError (ValueError)
//   NotFound -> NotFoundError (FileNotFoundError)
//   AlreadyExists -> AlreadyExistsError (FileExistsError)
//   IoError -> StorageError (OSError)
//   Unsupported -> UnsupportedError (NotImplementedError)
//   Unavailable -> UnavailableError (ConnectionError)
//   TimedOut -> TimedOutError (TimeoutError)
//   Corruption, Busy, Aborted, ResourceExhausted, Internal -> CorruptionError,
//   BusyError, AbortedError, ResourceExhaustedError, InternalError.
// The message is the native one (what, where, what to do).
#pragma once

#include <nanobind/nanobind.h>

#include <string>

#include "tokenfeed/status.h"

namespace tokenfeed::python {

void RegisterExceptions(nanobind::module_& m);

// Raises the exception for a non-OK status (returns normally when OK).
void ThrowIfError(const Status& status);

// Raises InvalidArgumentError (a ValueError) with this message.
[[noreturn]] void RaiseInvalidArgument(const std::string& message);

template <typename T>
T ValueOrThrow(Result<T> r) {
  if (!r.ok()) ThrowIfError(r.status());
  return std::move(r).value();
}

}  // namespace tokenfeed::python
