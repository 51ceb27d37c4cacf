// LoaderOptions for Python: the loader's and the plan's options in one object, enums as the
// names the CLI uses ("global", "bestfit", "int64", "skip", ...).
#include <nanobind/stl/string.h>

#include <string>

#include "common/human_size.h"
#include "register.h"

namespace nb = nanobind;

namespace stoker::python {

namespace {

Result<ErrorPolicy> ParseErrorPolicy(const std::string& name) {
  if (name == "fail") return ErrorPolicy::kFail;
  if (name == "skip") return ErrorPolicy::kSkip;
  return InvalidArgument("on_error must be 'fail' or 'skip', not '" + name + "'");
}

Result<TokenDType> ParseOutputDType(const std::string& name) {
  STOKER_ASSIGN_OR_RETURN(TokenDType d, ParseTokenDType(name));
  if (d != TokenDType::kInt32 && d != TokenDType::kInt64) {
    return InvalidArgument("token_dtype must be 'int32' or 'int64', not '" + name + "'");
  }
  return d;
}

}  // namespace

void RegisterOptions(nb::module_& m) {
  nb::class_<LoaderOptions>(m, "LoaderOptions",
                            "Loader and plan options (see docs/loader.md); enums by name.")
      .def(nb::init<>())
      .def_rw("batch_size", &LoaderOptions::batch_size)
      .def_rw("seq_len", &LoaderOptions::seq_len)
      .def_rw("num_workers", &LoaderOptions::num_workers)
      .def_rw("pin_memory", &LoaderOptions::pin_memory)
      .def_rw("prefetch_factor", &LoaderOptions::prefetch_factor)
      .def_rw("persistent_workers", &LoaderOptions::persistent_workers)
      .def_rw("drop_last", &LoaderOptions::drop_last)
      .def_rw("device", &LoaderOptions::device)
      .def_rw("device_buffers", &LoaderOptions::device_buffers)
      .def_rw("cross_document_targets", &LoaderOptions::cross_document_targets)
      .def_rw("attention_mask", &LoaderOptions::attention_mask)
      .def_rw("position_ids", &LoaderOptions::position_ids)
      .def_rw("segment_ids", &LoaderOptions::segment_ids)
      .def_rw("pad_token_id", &LoaderOptions::pad_token_id)
      .def_rw("monitor_warnings", &LoaderOptions::monitor_warnings)
      .def_rw("cache_dir", &LoaderOptions::cache_dir)
      .def_rw("cache_size_bytes", &LoaderOptions::cache_size_bytes)
      .def_rw("world_size", &LoaderOptions::world_size)
      .def_rw("rank", &LoaderOptions::rank)
      .def_rw("seed", &LoaderOptions::seed)
      .def_rw("block_shards", &LoaderOptions::block_shards)
      .def_rw("bestfit_window", &LoaderOptions::bestfit_window)
      .def_prop_rw(
          "shuffle", [](const LoaderOptions& o) { return std::string(ShuffleModeName(o.shuffle)); },
          [](LoaderOptions& o, const std::string& v) { o.shuffle = Unwrap(ParseShuffleMode(v)); })
      .def_prop_rw(
          "pack", [](const LoaderOptions& o) { return std::string(PackModeName(o.pack)); },
          [](LoaderOptions& o, const std::string& v) { o.pack = Unwrap(ParsePackMode(v)); })
      .def_prop_rw(
          "token_dtype",
          [](const LoaderOptions& o) { return std::string(TokenDTypeName(o.token_dtype)); },
          [](LoaderOptions& o, const std::string& v) { o.token_dtype = Unwrap(ParseOutputDType(v)); })
      .def_prop_rw(
          "on_error",
          [](const LoaderOptions& o) {
            return std::string(o.on_error == ErrorPolicy::kSkip ? "skip" : "fail");
          },
          [](LoaderOptions& o, const std::string& v) { o.on_error = Unwrap(ParseErrorPolicy(v)); });
  m.def("parse_size", [](const std::string& text) { return Unwrap(ParseSize(text)); },
        "'200GiB', '500M', '1.5TiB' or a byte count, as `stoker pack --shard-size` reads them");
  m.def("default_num_workers", &DefaultNumWorkers,
        "Worker threads used for num_workers=0: cores / LOCAL_WORLD_SIZE, at least 1.");
}

}  // namespace stoker::python
