// The keyword options of a binding as a table of named fields (the loader's,
// the ingest's): finding the field a keyword names, or the TypeError Python
// gives an unknown keyword. Call with the GIL held.
#pragma once

#include <nanobind/nanobind.h>

#include <string>

namespace tokenfeed::python {

// The field of `fields` (each with a `name`) called `name`.
template <typename Field, size_t N>
const Field& FieldNamed(const Field (&fields)[N], const std::string& name) {
  for (const Field& f : fields) {
    if (name == f.name) return f;
  }
  throw nanobind::type_error(("unexpected keyword argument '" + name + "'").c_str());
}

}  // namespace tokenfeed::python
