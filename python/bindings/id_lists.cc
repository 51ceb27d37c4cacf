#include "id_lists.h"

#include <nanobind/nanobind.h>

#include <bit>
#include <new>

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

PyObject* IntCache::Get(int32_t id) {
  if (id >= 0 && static_cast<size_t>(id) < ints_.size()) {
    PyObject* o = ints_[static_cast<size_t>(id)];
    Py_INCREF(o);
    return o;
  }
  return PyLong_FromLong(id);
}

bool IntCache::Covers(std::span<const int32_t> ids) const {
  const size_t n = ints_.size();
  bool ok = true;
  for (int32_t id : ids) ok &= static_cast<uint32_t>(id) < n;  // negative ids wrap past n
  return ok;
}

// PyList_New(size) would calloc the items: zeroing every list under the GIL, where the other
// threads wait for it, just before Fill writes the same memory. An empty list given an
// uninitialised array of `size` items instead: Fill must set them all before the list can be seen
// or freed (RefCounts::Fill's contract), and nothing can see it before (it is untracked, and
// only the caller holds it).
PyObject* NewShell(size_t size) {
  PyObject* list = PyList_New(0);
  if (!list) return nullptr;
  if (size > 0) {
    auto* items = static_cast<PyObject**>(PyMem_Malloc(size * sizeof(PyObject*)));
    if (!items) {
      Py_DECREF(list);
      return PyErr_NoMemory();
    }
    auto* l = reinterpret_cast<PyListObject*>(list);
    l->ob_item = items;
    l->allocated = static_cast<Py_ssize_t>(size);
    Py_SET_SIZE(l, static_cast<Py_ssize_t>(size));
  }
  PyObject_GC_UnTrack(list);
  return list;
}

void TrackShells(PyObject* list) {
  const Py_ssize_t n = PyList_GET_SIZE(list);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = PyList_GET_ITEM(list, i);
    if (item && PyList_CheckExact(item) && !PyObject_GC_IsTracked(item)) PyObject_GC_Track(item);
  }
}

void RefCounts::Prepare(const IntCache& cache) {
  if (counts_) return;
  size_ = cache.size();
  counts_.reset(static_cast<uint32_t*>(std::calloc(size_, sizeof(uint32_t))));
  touched_.reset(static_cast<uint64_t*>(std::calloc((size_ + 63) / 64, sizeof(uint64_t))));
  if (!counts_ || !touched_) throw std::bad_alloc();
}

void RefCounts::Fill(PyObject* shell, std::span<const int32_t> ids, const IntCache& cache) {
  PyObject* const* ints = cache.data();
  PyObject** items = reinterpret_cast<PyListObject*>(shell)->ob_item;
  uint32_t* counts = counts_.get();
  uint64_t* touched = touched_.get();
  for (size_t i = 0; i < ids.size(); ++i) {
    const auto id = static_cast<uint32_t>(ids[i]);
    items[i] = ints[id];
    ++counts[id];
    touched[id >> 6] |= uint64_t{1} << (id & 63);
  }
  pending_ += ids.size();
}

void RefCounts::Apply(const IntCache& cache) {
  if (pending_ == 0) return;
  PyObject* const* ints = cache.data();
  for (size_t w = 0; w < (size_ + 63) / 64; ++w) {
    for (uint64_t bits = touched_[w]; bits != 0; bits &= bits - 1) {
      const size_t id = w * 64 + static_cast<size_t>(std::countr_zero(bits));
      PyObject* o = ints[id];
      Py_SET_REFCNT(o, Py_REFCNT(o) + static_cast<Py_ssize_t>(counts_[id]));
      counts_[id] = 0;
    }
    touched_[w] = 0;
  }
  pending_ = 0;
}

}  // namespace stoker::python
