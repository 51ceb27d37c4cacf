// Status -> Python exception, in one place (docs/style.md: "Errors").
#include <Python.h>
#include <nanobind/stl/string.h>

#include <string>
#include <string_view>

#include "register.h"

namespace nb = nanobind;

namespace stoker::python {

void ThrowIfSignalled() {
  if (PyErr_CheckSignals() != 0) throw nb::python_error();
}

void ThrowIfError(const Status& status) {
  if (status.ok()) return;
  PyObject* type = PyExc_RuntimeError;
  switch (status.code()) {
    case StatusCode::kNotFound:
      type = PyExc_FileNotFoundError;
      break;
    case StatusCode::kAlreadyExists:
      type = PyExc_FileExistsError;
      break;
    case StatusCode::kInvalidArgument:
    case StatusCode::kFailedPrecondition:
      type = PyExc_ValueError;
      break;
    case StatusCode::kOutOfRange:
      type = PyExc_IndexError;
      break;
    case StatusCode::kIOError:
    case StatusCode::kCorruption:
    case StatusCode::kUnavailable:
      type = PyExc_OSError;
      break;
    case StatusCode::kUnimplemented:
      type = PyExc_NotImplementedError;
      break;
    case StatusCode::kCancelled:
      // A blocking call stopped because of Ctrl-C: let the KeyboardInterrupt win.
      ThrowIfSignalled();
      break;
    default:
      break;
  }
  PyErr_SetString(type, status.message().c_str());
  throw nb::python_error();
}

void RegisterStatus(nb::module_& m) {
  m.def(
      "status_code_names",
      [] {
        nb::list names;
        for (int c = 0; c <= static_cast<int>(StatusCode::kInternal); ++c) {
          std::string_view name = StatusCodeName(static_cast<StatusCode>(c));
          names.append(nb::str(name.data(), name.size()));
        }
        return names;
      },
      "The stable names of stoker's status codes, in code order.");
  // Lets the tests check the mapping for every code, including ones hard to provoke.
  m.def(
      "_raise_status",
      [](int code, const std::string& message) {
        ThrowIfError(Status(static_cast<StatusCode>(code), message));
      },
      nb::arg("code"), nb::arg("message"));
}

}  // namespace stoker::python
