// tokenfeed._ext: the native core of the tokenfeed Python package. The public,
// typed API is python/tokenfeed/__init__.py; this module is private.
#include <nanobind/nanobind.h>

#include "status_to_exception.h"

namespace nb = nanobind;

namespace tokenfeed::python {
void RegisterTokenizer(nb::module_& m);
void RegisterIngest(nb::module_& m);
void RegisterLoader(nb::module_& m);
void RegisterReplay(nb::module_& m);
void RegisterClientLog(nb::module_& m);
}

NB_MODULE(_ext, m) {
  m.doc() = "tokenfeed native core (private; use the tokenfeed package)";
  m.attr("__version__") = TOKENFEED_VERSION;
  tokenfeed::python::RegisterExceptions(m);
  tokenfeed::python::RegisterTokenizer(m);
  tokenfeed::python::RegisterIngest(m);
  tokenfeed::python::RegisterLoader(m);
  tokenfeed::python::RegisterReplay(m);
  tokenfeed::python::RegisterClientLog(m);
}
