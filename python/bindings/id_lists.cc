#include "id_lists.h"

#include <nanobind/nanobind.h>

namespace nb = nanobind;

namespace stoker::python {

IntCache::~IntCache() {
  for (PyObject* o : ints_) Py_XDECREF(o);
}

void IntCache::Fill(uint64_t vocab_size) {
  if (!ints_.empty() || vocab_size > (uint64_t{1} << 24)) return;  // no cache past 16M ids
  std::vector<PyObject*> ints(vocab_size);
  for (size_t i = 0; i < ints.size(); ++i) {
    ints[i] = PyLong_FromLong(static_cast<long>(i));
    if (!ints[i]) {
      for (size_t k = 0; k < i; ++k) Py_DECREF(ints[k]);
      throw nb::python_error();
    }
  }
  ints_ = std::move(ints);
}

PyObject* IntCache::NewList(const std::vector<int32_t>& ids) {
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(ids.size()));
  if (!list) return nullptr;
  const size_t n = ints_.size();
  for (size_t i = 0; i < ids.size(); ++i) {
    const int32_t id = ids[i];
    PyObject* v;
    if (static_cast<uint32_t>(id) < n) {  // negative ids wrap past n
      v = ints_[static_cast<size_t>(id)];
      Py_INCREF(v);
    } else {
      v = PyLong_FromLong(id);
      if (!v) {
        Py_DECREF(list);  // the items not yet set are NULL, which the list's dealloc skips
        return nullptr;
      }
    }
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), v);
  }
  return list;
}

}  // namespace stoker::python
