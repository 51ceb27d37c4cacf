// The nanobind layer: one Register* function per stoker module, and the single place where a
// Status becomes a Python exception. Everything here runs with the GIL held unless a function
// says it releases it.
#pragma once

#include <nanobind/nanobind.h>

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "stoker/loader.h"
#include "stoker/plan.h"
#include "stoker/status.h"

namespace stoker::python {

// Raises the Python exception for a non-OK status (no-op when OK):
// kNotFound -> FileNotFoundError, kAlreadyExists -> FileExistsError, kInvalidArgument and
// kFailedPrecondition -> ValueError, kOutOfRange -> IndexError, kIOError, kCorruption and
// kUnavailable -> OSError, kUnimplemented -> NotImplementedError, kCancelled -> KeyboardInterrupt
// if a signal is pending else RuntimeError, anything else -> RuntimeError. The message is the
// C++ message.
void ThrowIfError(const Status& status);

template <typename T>
T Unwrap(Result<T> result) {
  ThrowIfError(result.status());
  return std::move(result).value();
}

// f() with the GIL released; then, with it held again, its Result unwrapped or its Status thrown.
// What may raise (argument conversion, self.get()) belongs before the call, outside f.
template <typename F>
auto Released(F&& f) {
  auto r = [&] {
    nanobind::gil_scoped_release release;
    return f();
  }();
  if constexpr (std::is_same_v<decltype(r), Status>) {
    ThrowIfError(r);
  } else {
    return Unwrap(std::move(r));
  }
}

// Raises KeyboardInterrupt (or whatever a Python signal handler raised) if a signal arrived.
void ThrowIfSignalled();

// A dataset as the Python layer passes it: (path, weight).
using DatasetSpec = std::pair<std::string, double>;

void RegisterStatus(nanobind::module_& m);
void RegisterOptions(nanobind::module_& m);
void RegisterFormat(nanobind::module_& m);
void RegisterIngest(nanobind::module_& m);
void RegisterPlan(nanobind::module_& m);
void RegisterBalance(nanobind::module_& m);
void RegisterLoader(nanobind::module_& m);
void RegisterText(nanobind::module_& m);
void RegisterChat(nanobind::module_& m);
void RegisterAttention(nanobind::module_& m);

}  // namespace stoker::python
