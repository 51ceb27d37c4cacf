// NB_MODULE(_stoker): the private extension behind the `stoker` Python package.
#include "register.h"

NB_MODULE(_stoker, m) {
  m.doc() = "stoker's C++ core; use the `stoker` package, not this module.";
  stoker::python::RegisterStatus(m);
  stoker::python::RegisterOptions(m);
  stoker::python::RegisterFormat(m);
  stoker::python::RegisterIngest(m);
  stoker::python::RegisterPlan(m);
  stoker::python::RegisterBalance(m);
  stoker::python::RegisterLoader(m);
  stoker::python::RegisterText(m);
  stoker::python::RegisterChat(m);
  stoker::python::RegisterAttention(m);
}
