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
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/env.h"
#include "id_lists.h"
#include "py_tokenizer.h"
#include "register.h"
#include "stoker/tokenizer.h"
#include "text/worker_pool.h"

namespace nb = nanobind;

namespace stoker::python {
namespace {

// Under the GIL: a list of ints (from `cache`) or a NumPy array that takes over `ids`.
nb::object IdsToPython(std::vector<int32_t>&& ids, bool numpy, IntCache& cache) {
  if (!numpy) {
    PyObject* list = cache.NewList(ids);
    if (!list) throw nb::python_error();
    return nb::steal(list);
  }
  auto* owned = new std::vector<int32_t>(std::move(ids));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<int32_t>*>(p); });
  size_t shape[1] = {owned->size()};
  return nb::ndarray<nb::numpy, int32_t>(owned->data(), 1, shape, owner).cast();
}

PyTokenizer Open(const std::string& path, const TokenizerOptions& o) {
  return PyTokenizer{Released([&] { return OpenTokenizer(path, o); }), IntCache()};
}

// Reads the str's own UTF-8 (cached in the str by Python), not a std::string copy of it: the str
// stays alive (the caller holds it) while the GIL is released.
nb::object Encode(PyTokenizer& t, const nb::str& text, bool numpy) {
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(text.ptr(), &size);
  if (!data) throw nb::python_error();
  const std::string_view utf8(data, static_cast<size_t>(size));
  std::vector<int32_t> ids;
  Released([&] { return t.tokenizer->Encode(utf8, &ids); });
  if (!numpy) t.ints.Fill(t.tokenizer->vocab_size());
  return IdsToPython(std::move(ids), numpy, t.ints);
}

// A run of consecutive texts encoded together, and the ids of each.
struct Chunk {
  size_t first = 0, last = 0;  // texts [first, last)
  size_t bytes = 0;
  std::vector<std::vector<int32_t>> ids;  // per text
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
// make that chunk's Python objects: a NumPy array per text, or a list of cached ints (see
// id_lists.h). The GIL-held part overlaps the other threads' encoding.
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
  PyObject* result = PyList_New(static_cast<Py_ssize_t>(count));
  if (!result) throw nb::python_error();
  nb::list out = nb::steal<nb::list>(result);
  std::atomic<size_t> next{0};  // into order
  Status error;                 // guarded by the GIL, like the two below
  size_t error_text = count;
  std::exception_ptr failure;  // a Python error while converting
  // Under the GIL: the chunk's Python objects.
  auto convert = [&](Chunk& c) {
    if (!c.status.ok()) {
      if (c.failed < error_text) {
        error_text = c.failed;
        error = c.status.WithContext("text " + std::to_string(c.failed));
      }
      return;
    }
    for (size_t i = c.first; i < c.last; ++i) {
      PyObject* item = IdsToPython(std::move(c.ids[i - c.first]), numpy, t.ints).release().ptr();
      PyList_SET_ITEM(result, static_cast<Py_ssize_t>(i), item);
    }
  };
  auto work = [&] {
    for (size_t k; (k = next.fetch_add(1)) < order.size();) {
      Chunk& c = chunks[order[k]];
      c.ids.resize(c.last - c.first);
      for (size_t i = c.first; i < c.last && c.status.ok(); ++i) {
        c.status = t.tokenizer->Encode(utf8[i], &c.ids[i - c.first]);
        c.failed = i;
      }
      {
        nb::gil_scoped_acquire gil;
        if (failure) return;
        try {
          convert(c);
        } catch (...) {
          failure = std::current_exception();
          next.store(order.size());
        }
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
  if (failure) std::rethrow_exception(failure);
  ThrowIfError(error);
  return out;
}

nb::bytes Decode(const PyTokenizer& t, const std::vector<int32_t>& ids) {
  std::string text;
  Released([&] { return t.tokenizer->Decode(ids, &text); });
  return nb::bytes(text.data(), text.size());
}

}  // namespace

void RegisterText(nb::module_& m) {
  nb::class_<PyTokenizer>(m, "_Tokenizer")
      .def_prop_ro("vocab_size", [](const PyTokenizer& t) { return t.tokenizer->vocab_size(); })
      .def_prop_ro("eos_id", [](const PyTokenizer& t) { return t.tokenizer->eos_id(); })
      .def_prop_ro("kind", [](const PyTokenizer& t) { return t.tokenizer->identity().kind; })
      .def_prop_ro("name", [](const PyTokenizer& t) { return t.tokenizer->identity().name; })
      .def("encode", &Encode, nb::arg("text"), nb::arg("numpy") = false)
      .def("encode_batch", &EncodeBatch, nb::arg("texts"), nb::arg("num_threads") = 0,
           nb::arg("numpy") = false)
      .def("decode_bytes", &Decode, nb::arg("ids"));
  m.def("_open_tokenizer", &Open, nb::arg("path"), nb::arg("options"));
}

}  // namespace stoker::python
