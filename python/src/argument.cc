#include "argument.h"

#include <limits>

#include "status_to_exception.h"

namespace nb = nanobind;

namespace tokenfeed::python {

std::string ArgumentRepr(nb::handle value) {
  PyObject* r = PyObject_Repr(value.ptr());
  if (r == nullptr) {
    PyErr_Clear();
    return "?";
  }
  std::string out = nb::borrow<nb::str>(r).c_str();
  Py_DECREF(r);
  return out.size() > 80 ? out.substr(0, 77) + "..." : out;
}

namespace {

std::string TypeName(nb::handle value) { return Py_TYPE(value.ptr())->tp_name; }

[[noreturn]] void OutOfRange(const char* name, const std::string& lo, const std::string& hi, nb::handle value) {
  RaiseInvalidArgument(std::string(name) + " must be an integer between " + lo + " and " + hi + ", not " +
                       ArgumentRepr(value));
}

// The value as a Python int (through __index__), or a TypeError naming it.
nb::object AsInt(nb::handle value, const char* name) {
  if (PyBool_Check(value.ptr()) || !PyIndex_Check(value.ptr())) {
    throw nb::type_error(
        (std::string(name) + " must be an integer, not " + TypeName(value) + " " + ArgumentRepr(value)).c_str());
  }
  PyObject* i = PyNumber_Index(value.ptr());
  if (i == nullptr) throw nb::python_error();
  return nb::steal(i);
}

}  // namespace

int64_t IntegerArgument(nb::handle value, const char* name, int64_t lo, int64_t hi) {
  nb::object i = AsInt(value, name);
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (overflow != 0 || v < lo || v > hi) OutOfRange(name, std::to_string(lo), std::to_string(hi), value);
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  return v;
}

std::optional<uint64_t> UnsignedInRange(nb::handle value, const char* name, uint64_t lo, uint64_t hi) {
  nb::object i = AsInt(value, name);
  const int negative = PyObject_RichCompareBool(i.ptr(), nb::int_(0).ptr(), Py_LT);
  if (negative < 0) throw nb::python_error();
  if (negative != 0) return std::nullopt;
  const unsigned long long v = PyLong_AsUnsignedLongLong(i.ptr());
  if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();  // above 2^64 - 1
    return std::nullopt;
  }
  if (v < lo || v > hi) return std::nullopt;
  return v;
}

uint64_t UnsignedArgument(nb::handle value, const char* name, uint64_t hi) {
  if (std::optional<uint64_t> v = UnsignedInRange(value, name, 0, hi)) return *v;
  OutOfRange(name, "0", std::to_string(hi), value);
}

bool BoolArgument(nb::handle value, const char* name) {
  if (PyBool_Check(value.ptr())) return value.ptr() == Py_True;
  // numpy booleans say what they are through __bool__ but are not int.
  if (std::string(Py_TYPE(value.ptr())->tp_name) == "numpy.bool" ||
      std::string(Py_TYPE(value.ptr())->tp_name) == "numpy.bool_") {
    return PyObject_IsTrue(value.ptr()) == 1;
  }
  throw nb::type_error((std::string(name) + " must be True or False, not " + TypeName(value) + " " + ArgumentRepr(value)).c_str());
}

std::string StringArgument(nb::handle value, const char* name) {
  if (!PyUnicode_Check(value.ptr())) {
    throw nb::type_error((std::string(name) + " must be a str, not " + TypeName(value) + " " + ArgumentRepr(value)).c_str());
  }
  Py_ssize_t size;
  const char* data = PyUnicode_AsUTF8AndSize(value.ptr(), &size);
  if (data == nullptr) throw nb::python_error();
  return std::string(data, static_cast<size_t>(size));
}

std::vector<std::string> StringListArgument(nb::handle value, const char* name) {
  if (PyUnicode_Check(value.ptr()) || PyBytes_Check(value.ptr())) {
    throw nb::type_error((std::string(name) + " must be a list of strings, not one " + TypeName(value) + " (" +
                          ArgumentRepr(value) + "): write [" + ArgumentRepr(value) + "]")
                             .c_str());
  }
  if (!PySequence_Check(value.ptr())) {
    throw nb::type_error(
        (std::string(name) + " must be a list of strings, not " + TypeName(value) + " " + ArgumentRepr(value)).c_str());
  }
  std::vector<std::string> out;
  nb::sequence seq = nb::borrow<nb::sequence>(value);
  const size_t n = nb::len(seq);
  for (size_t i = 0; i < n; ++i) {
    nb::object item = seq[i];
    if (!PyUnicode_Check(item.ptr())) {
      throw nb::type_error((std::string(name) + "[" + std::to_string(i) + "] must be a str, not " + TypeName(item) +
                            " " + ArgumentRepr(item))
                               .c_str());
    }
    out.push_back(StringArgument(item, name));
  }
  return out;
}

}  // namespace tokenfeed::python
