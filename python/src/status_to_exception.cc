#include "status_to_exception.h"

namespace nb = nanobind;

namespace tokenfeed::python {
namespace {
PyObject* g_tokenfeed_error = nullptr;
}

void RegisterExceptions(nb::module_& m) {
  static nb::exception<std::runtime_error> error(m, "TokenfeedError", PyExc_RuntimeError);
  g_tokenfeed_error = error.ptr();
}

void ThrowIfError(const Status& status) {
  if (status.ok()) return;
  PyObject* type = g_tokenfeed_error;
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange: type = PyExc_ValueError; break;
    case StatusCode::kNotFound: type = PyExc_FileNotFoundError; break;
    case StatusCode::kIoError: type = PyExc_OSError; break;
    case StatusCode::kUnsupported: type = PyExc_NotImplementedError; break;
    case StatusCode::kTimedOut: type = PyExc_TimeoutError; break;
    default: break;
  }
  PyErr_SetString(type, status.message().c_str());
  throw nb::python_error();
}

}  // namespace tokenfeed::python
