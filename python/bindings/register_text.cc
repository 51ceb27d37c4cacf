// stoker.Tokenizer: the tokenizers of `stoker pack` (bytes, SentencePiece, tokenizer.json,
// tiktoken) from Python. encode/encode_batch/decode release the GIL; encode_batch encodes on
// num_threads threads (the caller and the process's WorkerPool) sharing the one tokenizer.
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/env.h"
#include "id_lists.h"
#include "register.h"
#include "text/tokenizer.h"
#include "text/worker_pool.h"

namespace nb = nanobind;

namespace stoker::python {
namespace {

struct PyTokenizer {
  std::unique_ptr<Tokenizer> tokenizer;
  IntCache ints;
  RefCounts refs;  // guarded by the GIL: encode's list output (ListOfIds)
};

// Under the GIL: a list of ints (from `cache`) or a NumPy array that takes over `ids`.
nb::object IdsToPython(std::vector<int32_t>&& ids, bool numpy, IntCache& cache) {
  if (!numpy) {
    PyObject* list = PyList_New(static_cast<Py_ssize_t>(ids.size()));
    if (!list) throw nb::python_error();
    nb::object owner = nb::steal(list);
    for (size_t i = 0; i < ids.size(); ++i) {
      PyObject* v = cache.Get(ids[i]);
      if (!v) throw nb::python_error();
      PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), v);
    }
    return owner;
  }
  auto* owned = new std::vector<int32_t>(std::move(ids));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<int32_t>*>(p); });
  size_t shape[1] = {owned->size()};
  return nb::ndarray<nb::numpy, int32_t>(owned->data(), 1, shape, owner).cast();
}

PyTokenizer Open(const std::string& path, const TokenizerOptions& o) {
  Result<std::unique_ptr<Tokenizer>> t = [&] {
    nb::gil_scoped_release release;
    return OpenTokenizer(path, o);
  }();
  return PyTokenizer{Unwrap(std::move(t)), IntCache()};
}

// Under the GIL: the list of `ids`, for a text long enough that taking a reference per token
// (a write to one of 100k ints scattered over megabytes: a cache miss each) costs more than
// counting them per id and adding each id's count once (RefCounts, as encode_batch does). A
// fresh list with no items, filled and counted before any Python code runs: nothing sees the
// items between Fill and Apply.
constexpr size_t kCountedRefsFrom = 256;  // tokens

nb::object ListOfIds(PyTokenizer& t, std::vector<int32_t>&& ids) {
  t.ints.Fill(t.tokenizer->vocab_size());
  if (!kFillListsWithoutGil || ids.size() < kCountedRefsFrom || ids.size() > UINT32_MAX ||
      !t.ints.Covers(ids)) {
    return IdsToPython(std::move(ids), false, t.ints);
  }
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(ids.size()));
  if (!list) throw nb::python_error();
  t.refs.Prepare(t.ints);
  t.refs.Fill(list, ids, t.ints);
  t.refs.Apply(t.ints);
  return nb::steal(list);
}

nb::object Encode(PyTokenizer& t, const std::string& text, bool numpy) {
  std::vector<int32_t> ids;
  Status st;
  {
    nb::gil_scoped_release release;
    st = t.tokenizer->Encode(text, &ids);
  }
  ThrowIfError(st);
  if (!numpy) return ListOfIds(t, std::move(ids));
  return IdsToPython(std::move(ids), true, t.ints);
}

// A run of consecutive texts encoded together, and the ids of each.
struct Chunk {
  size_t first = 0, last = 0;  // texts [first, last)
  size_t bytes = 0;
  std::vector<std::vector<int32_t>> ids;  // per text
  std::vector<uint8_t> covered;           // per text: every id has a cached int
  std::vector<PyObject*> shells;          // per text: its list shell, to fill without the GIL
  Status status;
  size_t failed = 0;  // the text that failed, when !status.ok()
};

constexpr size_t kChunkBytes = 64 << 10;  // about 1 ms of BPE work: many chunks per thread

// Cuts the texts into chunks of about kChunkBytes, borrowing each str's UTF-8 (no copy).
std::vector<Chunk> ChunkTexts(const nb::list& texts, std::vector<nb::object>* keep,
                              std::vector<std::string_view>* utf8) {
  const size_t count = texts.size();
  keep->resize(count);  // the strs stay alive while their bytes are read
  utf8->resize(count);
  std::vector<Chunk> chunks;
  for (size_t i = 0; i < count; ++i) {
    (*keep)[i] = texts[i];
    if (!PyUnicode_Check((*keep)[i].ptr())) {
      throw nb::type_error(("encode_batch: text " + std::to_string(i) + " is not a str").c_str());
    }
    Py_ssize_t size = 0;
    const char* data = PyUnicode_AsUTF8AndSize((*keep)[i].ptr(), &size);
    if (!data) throw nb::python_error();
    (*utf8)[i] = std::string_view(data, static_cast<size_t>(size));
    if (chunks.empty() || chunks.back().bytes >= kChunkBytes) {
      chunks.emplace_back();
      chunks.back().first = i;
    }
    chunks.back().last = i + 1;
    chunks.back().bytes += (*utf8)[i].size() + 64;  // + a little per text: tiny texts make chunks
  }
  return chunks;
}

// encode_batch: the chunks go to the threads largest first (so no thread is left with a big one
// at the end): the calling thread and num_threads - 1 threads of the process's WorkerPool (whose
// piece caches stay warm across calls). Each thread takes the GIL once per chunk it encoded, to
// make that chunk's Python objects: a NumPy array per text, or for lists (see id_lists.h) an
// untracked list shell whose items the thread then fills without the GIL. The GIL-held part is
// thus a few allocations per chunk, and it overlaps the other threads' encoding.
nb::list EncodeBatch(PyTokenizer& t, nb::list texts, int num_threads, bool numpy) {
  const size_t count = texts.size();
  std::vector<nb::object> keep;
  std::vector<std::string_view> utf8;
  std::vector<Chunk> chunks = ChunkTexts(texts, &keep, &utf8);
  std::vector<size_t> order(chunks.size());  // the order chunks are encoded in
  for (size_t c = 0; c < order.size(); ++c) order[c] = c;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return chunks[a].bytes > chunks[b].bytes; });
  int n = num_threads > 0 ? num_threads : DefaultThreadsPerRank();
  n = static_cast<int>(
      std::min<size_t>(static_cast<size_t>(n), std::max<size_t>(1, chunks.size())));

  if (!numpy) t.ints.Fill(t.tokenizer->vocab_size());
  const bool shells = !numpy && kFillListsWithoutGil && t.ints.size() > 0;
  PyObject* result = PyList_New(static_cast<Py_ssize_t>(count));
  if (!result) throw nb::python_error();
  nb::list out = nb::steal<nb::list>(result);
  std::atomic<size_t> next{0};  // into order
  std::atomic<size_t> next_thread{0};
  std::vector<RefCounts> refs(static_cast<size_t>(n));  // one per thread
  Status error;                                         // guarded by the GIL, like the two below
  size_t error_text = count;
  std::exception_ptr failure;  // a Python error while converting
  // Under the GIL: the chunk's Python objects (list shells where c.shells says so).
  auto convert = [&](Chunk& c, RefCounts& rc) {
    if (!c.status.ok()) {
      if (c.failed < error_text) {
        error_text = c.failed;
        error = c.status.WithContext("text " + std::to_string(c.failed));
      }
      return;
    }
    uint64_t tokens = 0;
    for (const std::vector<int32_t>& ids : c.ids) tokens += ids.size();
    if (shells) {
      rc.Prepare(t.ints);
      if (rc.pending() + tokens > UINT32_MAX) rc.Apply(t.ints);
    }
    for (size_t i = c.first; i < c.last; ++i) {
      std::vector<int32_t>& ids = c.ids[i - c.first];
      PyObject* item = nullptr;
      if (shells && c.covered[i - c.first]) {
        item = NewShell(ids.size());
        if (!item) throw nb::python_error();
        c.shells[i - c.first] = item;
      } else {
        item = IdsToPython(std::move(ids), numpy, t.ints).release().ptr();
      }
      PyList_SET_ITEM(result, static_cast<Py_ssize_t>(i), item);
    }
  };
  auto work = [&] {
    RefCounts& rc = refs[next_thread.fetch_add(1)];
    for (size_t k; (k = next.fetch_add(1)) < order.size();) {
      Chunk& c = chunks[order[k]];
      c.ids.resize(c.last - c.first);
      c.covered.assign(c.last - c.first, 0);
      c.shells.assign(c.last - c.first, nullptr);
      for (size_t i = c.first; i < c.last && c.status.ok(); ++i) {
        std::vector<int32_t>& ids = c.ids[i - c.first];
        c.status = t.tokenizer->Encode(utf8[i], &ids);
        c.failed = i;
        c.covered[i - c.first] = shells && t.ints.Covers(ids);
      }
      {
        nb::gil_scoped_acquire gil;
        if (failure) return;
        try {
          convert(c, rc);
        } catch (...) {
          failure = std::current_exception();
          next.store(order.size());
        }
      }
      // Every shell made is filled here, on this thread, also after a failure: NewShell leaves
      // its items unset, and the result frees them when the call fails.
      for (size_t j = 0; j < c.shells.size(); ++j) {
        if (c.shells[j]) rc.Fill(c.shells[j], c.ids[j], t.ints);
      }
      std::vector<std::vector<int32_t>>().swap(c.ids);  // freed without the GIL
    }
  };
  {
    nb::gil_scoped_release release;
    std::optional<WorkerPool::Group> helpers;
    if (n > 1) helpers.emplace(WorkerPool::Shared().Start(static_cast<size_t>(n - 1), work));
    work();
  }  // the helpers are waited for here, without the GIL (they take it to convert)
  // The references the shells took, before any of them can be freed (also on an error).
  for (RefCounts& rc : refs) rc.Apply(t.ints);
  if (failure) std::rethrow_exception(failure);
  ThrowIfError(error);
  if (shells) TrackShells(result);
  return out;
}

nb::bytes Decode(const PyTokenizer& t, const std::vector<int32_t>& ids) {
  std::string text;
  Status st;
  {
    nb::gil_scoped_release release;
    st = t.tokenizer->Decode(ids, &text);
  }
  ThrowIfError(st);
  return nb::bytes(text.data(), text.size());
}

}  // namespace

void RegisterText(nb::module_& m) {
  nb::class_<PyTokenizer>(m, "_Tokenizer")
      .def_prop_ro("vocab_size", [](const PyTokenizer& t) { return t.tokenizer->vocab_size(); })
      .def_prop_ro("eos_id", [](const PyTokenizer& t) { return t.tokenizer->eos_id(); })
      .def_prop_ro("kind", [](const PyTokenizer& t) { return t.tokenizer->identity().kind; })
      .def_prop_ro("name", [](const PyTokenizer& t) { return t.tokenizer->identity().name; })
      .def_prop_ro("checksum",
                   [](const PyTokenizer& t) { return t.tokenizer->identity().checksum; })
      .def("encode", &Encode, nb::arg("text"), nb::arg("numpy") = false)
      .def("encode_batch", &EncodeBatch, nb::arg("texts"), nb::arg("num_threads") = 0,
           nb::arg("numpy") = false)
      .def("decode_bytes", &Decode, nb::arg("ids"));
  m.def("_open_tokenizer", &Open, nb::arg("path"), nb::arg("options"));
}

}  // namespace stoker::python
