// stoker.Tokenizer: the tokenizers of `stoker pack` (bytes, SentencePiece, tokenizer.json,
// tiktoken) from Python. encode/encode_batch/decode release the GIL; encode_batch encodes on
// num_threads threads sharing the one (thread-safe) tokenizer.
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "register.h"
#include "text/tokenizer.h"

namespace nb = nanobind;

namespace stoker::python {
namespace {

struct PyTokenizer {
  std::unique_ptr<Tokenizer> tokenizer;
};

nb::object IdsToPython(std::vector<int32_t> ids, bool numpy) {
  if (!numpy) {
    PyObject* list = PyList_New(static_cast<Py_ssize_t>(ids.size()));
    if (!list) throw nb::python_error();
    for (size_t i = 0; i < ids.size(); ++i) {
      PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), PyLong_FromLong(ids[i]));
    }
    return nb::steal(list);
  }
  auto* owned = new std::vector<int32_t>(std::move(ids));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<int32_t>*>(p); });
  size_t shape[1] = {owned->size()};
  return nb::ndarray<nb::numpy, int32_t>(owned->data(), 1, shape, owner).cast();
}

PyTokenizer Open(const std::string& path, const std::string& pattern, const std::string& special,
                 bool allow_special, const std::string& eos, bool post_processor) {
  TokenizerOptions o{pattern, special, allow_special, eos, post_processor};
  Result<std::unique_ptr<Tokenizer>> t = [&] {
    nb::gil_scoped_release release;
    return OpenTokenizer(path, o);
  }();
  return PyTokenizer{Unwrap(std::move(t))};
}

nb::object Encode(const PyTokenizer& t, const std::string& text, bool numpy) {
  std::vector<int32_t> ids;
  Status st;
  {
    nb::gil_scoped_release release;
    st = t.tokenizer->Encode(text, &ids);
  }
  ThrowIfError(st);
  return IdsToPython(std::move(ids), numpy);
}

nb::list EncodeBatch(const PyTokenizer& t, const std::vector<std::string>& texts,
                     int num_threads, bool numpy) {
  std::vector<std::vector<int32_t>> out(texts.size());
  std::vector<Status> errors(texts.size());
  {
    nb::gil_scoped_release release;
    int n = num_threads > 0 ? num_threads
                            : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    n = static_cast<int>(std::min<size_t>(static_cast<size_t>(n), std::max<size_t>(1, texts.size())));
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t i; (i = next.fetch_add(1)) < texts.size();) {
        errors[i] = t.tokenizer->Encode(texts[i], &out[i]);
      }
    };
    std::vector<std::thread> threads;
    for (int k = 1; k < n; ++k) threads.emplace_back(work);
    work();
    for (auto& th : threads) th.join();
  }
  for (size_t i = 0; i < errors.size(); ++i) {
    if (!errors[i].ok()) ThrowIfError(errors[i].WithContext("text " + std::to_string(i)));
  }
  nb::list result;
  for (auto& ids : out) result.append(IdsToPython(std::move(ids), numpy));
  return result;
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
  m.def("_open_tokenizer", &Open, nb::arg("path"), nb::arg("pattern"), nb::arg("special"),
        nb::arg("allow_special"), nb::arg("eos"), nb::arg("post_processor"));
}

}  // namespace stoker::python
