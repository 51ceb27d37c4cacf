// Python lists of token ids for stoker.Tokenizer, built with the public C API only.
//
// A list of ids holds references to one cached Python int per vocabulary id (IntCache), so a
// list is a run of pointers, not an int object per token. Lists are made with PyList_New and
// filled with PyList_SET_ITEM under the GIL (a reference count may only change under it):
// encode_batch makes each chunk's lists on the thread that encoded the chunk, while the other
// threads encode theirs without the GIL.
//
// Thread contract: IntCache is filled, read and destroyed under the GIL.
#pragma once

#include <Python.h>

#include <cstdint>
#include <vector>

namespace stoker::python {

// One Python int per id of the vocabulary, made on the first list output.
class IntCache {
 public:
  IntCache() = default;
  IntCache(IntCache&& o) noexcept : ints_(std::move(o.ints_)) { o.ints_.clear(); }
  IntCache& operator=(IntCache&&) = delete;
  ~IntCache();

  // Under the GIL: makes the ints (no cache past 16M ids). Throws nb::python_error.
  void Fill(uint64_t vocab_size);
  // Under the GIL: a new list of the ints of `ids` (cached where the cache covers them), or
  // nullptr with a Python error set.
  PyObject* NewList(const std::vector<int32_t>& ids);

 private:
  std::vector<PyObject*> ints_;
};

}  // namespace stoker::python
