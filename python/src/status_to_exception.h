// The one place where a tokenfeed::Status becomes a Python exception.
// InvalidArgument -> ValueError, NotFound -> FileNotFoundError,
// IoError -> OSError, Unsupported -> NotImplementedError, the rest ->
// tokenfeed.TokenfeedError (a RuntimeError). The message is the native one.
#pragma once

#include <nanobind/nanobind.h>

#include "tokenfeed/status.h"

namespace tokenfeed::python {

void RegisterExceptions(nanobind::module_& m);

// Raises the exception for a non-OK status (returns normally when OK).
void ThrowIfError(const Status& status);

template <typename T>
T ValueOrThrow(Result<T> r) {
  if (!r.ok()) ThrowIfError(r.status());
  return std::move(r).value();
}

}  // namespace tokenfeed::python
