// Python lists of token ids for stoker.Tokenizer, built mostly without the GIL.
//
// A list of ids holds references to one cached Python int per vocabulary id (IntCache), so a
// list is a run of pointers, not an int object per token. encode_batch makes each list under the
// GIL as an untracked shell whose items are not yet set (NewShell: invisible to the cyclic GC,
// which otherwise traversed the young lists' million items on every collection that their
// allocation triggered, and not zeroed under the GIL), then points its items at the cached ints
// on its own thread without the GIL (RefCounts::Fill), counting the references it hands out per
// id. Those counts are added to the ints' reference counts in one pass under the GIL
// (RefCounts::Apply) before any list can be seen or freed, and the lists are tracked again
// (TrackShells) before encode_batch returns.
//
// Thread contract: IntCache is filled and destroyed under the GIL; once filled, Get needs the GIL
// and data()/size() may be read from any thread. A RefCounts belongs to one thread at a time;
// Fill needs no GIL, Apply needs it.
#pragma once

#include <Python.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
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
  // Under the GIL: a new reference to the int `id`, or nullptr with a Python error set.
  PyObject* Get(int32_t id);

  // The cached ints (empty before Fill, or for a vocabulary too large to cache).
  size_t size() const { return ints_.size(); }
  PyObject* const* data() const { return ints_.data(); }
  // Whether every id of `ids` has a cached int.
  bool Covers(std::span<const int32_t> ids) const;

 private:
  std::vector<PyObject*> ints_;
};

// Whether lists may be filled without the GIL (not on a free-threaded Python, whose reference
// counts are not plain fields).
#ifdef Py_GIL_DISABLED
inline constexpr bool kFillListsWithoutGil = false;
#else
inline constexpr bool kFillListsWithoutGil = true;
#endif

// Under the GIL: a new list of `size` items NOT YET SET, not tracked by the cyclic GC (a new
// reference, or nullptr with a Python error set). RefCounts::Fill must set its items before the
// list is seen by other code or freed.
PyObject* NewShell(size_t size);
// Under the GIL: tracks again every untracked list among the items of `list`.
void TrackShells(PyObject* list);

// References to cached ints handed out without the GIL, per id, until Apply adds them to the
// ints' reference counts.
class RefCounts {
 public:
  // Under the GIL, before Fill: allocates the counts for `cache` (once). Throws std::bad_alloc.
  void Prepare(const IntCache& cache);
  // With or without the GIL: sets the items of `shell` (a new list of ids.size() items not yet
  // set, from NewShell or PyList_New, seen by no other thread) to the cached ints of `ids`,
  // which the cache must cover.
  void Fill(PyObject* shell, std::span<const int32_t> ids, const IntCache& cache);
  // Under the GIL: adds the counted references to the ints and starts again from zero.
  void Apply(const IntCache& cache);
  // References counted since the last Apply (so one id's count cannot overflow: Apply first
  // when this plus what comes would pass UINT32_MAX).
  uint64_t pending() const { return pending_; }

 private:
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  // calloc'd when first needed: a fresh mapping costs no zeroing, and Apply reads only the
  // 64-id words that `touched_` marks, so a small call pays for little of a large vocabulary.
  std::unique_ptr<uint32_t[], Free> counts_;
  std::unique_ptr<uint64_t[], Free> touched_;  // one bit per id: counts_[id] may be non-zero
  size_t size_ = 0;
  uint64_t pending_ = 0;
};

}  // namespace stoker::python
