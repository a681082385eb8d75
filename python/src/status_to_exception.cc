#include "status_to_exception.h"

#include <array>

namespace nb = nanobind;

namespace tokenfeed::python {
namespace {

PyObject* g_base = nullptr;
std::array<PyObject*, 15> g_by_code{};  // by StatusCode

struct ErrorClass {
  StatusCode code;
  const char* name;
  PyObject* builtin;  // also a subclass of this; null: TokenfeedError only
  const char* doc;
};

}  // namespace

void RegisterExceptions(nb::module_& m) {
  g_base = PyErr_NewExceptionWithDoc("tokenfeed.TokenfeedError",
                                     "Base class of every error tokenfeed raises.", PyExc_Exception, nullptr);
  if (g_base == nullptr) throw nb::python_error();
  m.attr("TokenfeedError") = nb::handle(g_base);
  const ErrorClass classes[] = {
      {StatusCode::kInvalidArgument, "InvalidArgumentError", PyExc_ValueError,
       "A parameter, option, URI or state is not valid (also a ValueError)."},
      {StatusCode::kNotFound, "NotFoundError", PyExc_FileNotFoundError,
       "A file, topic or partition does not exist (also a FileNotFoundError)."},
      {StatusCode::kAlreadyExists, "AlreadyExistsError", PyExc_FileExistsError,
       "Something to be created exists already (also a FileExistsError)."},
      {StatusCode::kIoError, "StorageError", PyExc_OSError,
       "The operating system refused a file operation (also an OSError)."},
      {StatusCode::kUnsupported, "UnsupportedError", PyExc_NotImplementedError,
       "Valid input this build does not handle (also a NotImplementedError)."},
      {StatusCode::kUnavailable, "UnavailableError", PyExc_ConnectionError,
       "A Kafka cluster or other service cannot be reached (also a ConnectionError)."},
      {StatusCode::kTimedOut, "TimedOutError", PyExc_TimeoutError,
       "An operation did not finish in time (also a TimeoutError)."},
      {StatusCode::kCorruption, "CorruptionError", nullptr, "Stored bytes fail a checksum or do not parse."},
      {StatusCode::kBusy, "BusyError", nullptr, "Another process holds a lock."},
      {StatusCode::kAborted, "AbortedError", nullptr, "Stopped on request."},
      {StatusCode::kResourceExhausted, "ResourceExhaustedError", nullptr,
       "Out of memory or disk, or over a size limit."},
      {StatusCode::kInternal, "InternalError", nullptr, "A bug in tokenfeed: please report it."},
  };
  for (const ErrorClass& c : classes) {
    PyObject* bases = c.builtin ? PyTuple_Pack(2, g_base, c.builtin) : PyTuple_Pack(1, g_base);
    if (bases == nullptr) throw nb::python_error();
    const std::string qualified = std::string("tokenfeed.") + c.name;
    PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), c.doc, bases, nullptr);
    Py_DECREF(bases);
    if (type == nullptr) throw nb::python_error();
    m.attr(c.name) = nb::handle(type);
    g_by_code[static_cast<size_t>(c.code)] = type;
  }
  g_by_code[static_cast<size_t>(StatusCode::kOutOfRange)] = g_by_code[static_cast<size_t>(StatusCode::kInvalidArgument)];
}

void ThrowIfError(const Status& status) {
  if (status.ok()) return;
  const size_t code = static_cast<size_t>(status.code());
  PyObject* type = code < g_by_code.size() && g_by_code[code] != nullptr ? g_by_code[code] : g_base;
  PyErr_SetString(type, status.message().c_str());
  throw nb::python_error();
}

void RaiseInvalidArgument(const std::string& message) {
  PyErr_SetString(g_by_code[static_cast<size_t>(StatusCode::kInvalidArgument)], message.c_str());
  throw nb::python_error();
}

}  // namespace tokenfeed::python
