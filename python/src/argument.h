// Arguments from Python, checked once, in one place: integers (int or any
// object with __index__, such as numpy integers; never bool) within a range,
// and lists of strings that refuse a lone str. A bad value raises ValueError
// (or TypeError for the wrong kind of object) naming the parameter. Call
// with the GIL held.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tokenfeed::python {

int64_t IntegerArgument(nanobind::handle value, const char* name, int64_t lo, int64_t hi);
uint64_t UnsignedArgument(nanobind::handle value, const char* name, uint64_t hi);
// The value when it is an integer in [lo, hi]; nullopt when it is an integer
// outside it, of any size or sign (the caller words the range error).
std::optional<uint64_t> UnsignedInRange(nanobind::handle value, const char* name, uint64_t lo, uint64_t hi);
bool BoolArgument(nanobind::handle value, const char* name);
std::string StringArgument(nanobind::handle value, const char* name);
// A sequence of str; a str or bytes given alone is refused (it would be
// split into characters).
std::vector<std::string> StringListArgument(nanobind::handle value, const char* name);
// repr(value), cut to 80 characters, for messages.
std::string ArgumentRepr(nanobind::handle value);

}  // namespace tokenfeed::python
