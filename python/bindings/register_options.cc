// The option structs for Python, bound field by field from their one C++ definition: PlanOptions,
// LoaderOptions (a PlanOptions), TokenizerOptions and StreamOptions; enums as the names the CLI
// uses ("global", "bestfit", "int64", "skip", ...).
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "common/human_size.h"
#include "register.h"
#include "stream/stream_planner.h"
#include "text/utf8.h"

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
  nb::class_<MixturePhase>(m, "MixturePhase",
                           "One phase of a mixture schedule (docs/plan.md, \"Schedules\").")
      .def(nb::init<>())
      .def_rw("end_row", &MixturePhase::end_row)
      .def_rw("weights", &MixturePhase::weights)
      .def_rw("end_weights", &MixturePhase::end_weights);
  nb::class_<PlanOptions>(m, "PlanOptions", "Plan options (see docs/plan.md); enums by name.")
      .def(nb::init<>())
      .def_rw("seq_len", &PlanOptions::seq_len)
      .def_rw("batch_size", &PlanOptions::batch_size)
      .def_rw("world_size", &PlanOptions::world_size)
      .def_rw("rank", &PlanOptions::rank)
      .def_rw("seed", &PlanOptions::seed)
      .def_rw("block_shards", &PlanOptions::block_shards)
      .def_rw("bestfit_window", &PlanOptions::bestfit_window)
      .def_rw("phases", &PlanOptions::phases)
      .def_prop_rw(
          "shuffle", [](const PlanOptions& o) { return std::string(ShuffleModeName(o.shuffle)); },
          [](PlanOptions& o, const std::string& v) { o.shuffle = Unwrap(ParseShuffleMode(v)); })
      .def_prop_rw(
          "pack", [](const PlanOptions& o) { return std::string(PackModeName(o.pack)); },
          [](PlanOptions& o, const std::string& v) { o.pack = Unwrap(ParsePackMode(v)); })
      .def_prop_rw(
          "remainder",
          [](const PlanOptions& o) { return std::string(RemainderPolicyName(o.remainder)); },
          [](PlanOptions& o, const std::string& v) {
            o.remainder = Unwrap(ParseRemainderPolicy(v));
          })
      .def_prop_rw(
          "drop_last",  // torch's name for remainder "drop_last" (True) or "pad" (False)
          [](const PlanOptions& o) { return o.remainder == RemainderPolicy::kDropLast; },
          [](PlanOptions& o, bool v) {
            o.remainder = v ? RemainderPolicy::kDropLast : RemainderPolicy::kPad;
          });
  nb::class_<LoaderOptions, PlanOptions>(
      m, "LoaderOptions", "Loader options, plan options included (see docs/loader.md).")
      .def(nb::init<>())
      .def_rw("num_workers", &LoaderOptions::num_workers)
      .def_rw("pin_memory", &LoaderOptions::pin_memory)
      .def_rw("prefetch_factor", &LoaderOptions::prefetch_factor)
      .def_rw("persistent_workers", &LoaderOptions::persistent_workers)
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
      .def_prop_rw(
          "token_dtype",
          [](const LoaderOptions& o) { return std::string(TokenDTypeName(o.token_dtype)); },
          [](LoaderOptions& o, const std::string& v) {
            o.token_dtype = Unwrap(ParseOutputDType(v));
          })
      .def_prop_rw(
          "long_documents",
          [](const LoaderOptions& o) { return std::string(LongDocumentsName(o.long_documents)); },
          [](LoaderOptions& o, const std::string& v) {
            o.long_documents = Unwrap(ParseLongDocuments(v));
          })
      .def_prop_rw(
          "on_error",
          [](const LoaderOptions& o) {
            return std::string(o.on_error == ErrorPolicy::kSkip ? "skip" : "fail");
          },
          [](LoaderOptions& o, const std::string& v) { o.on_error = Unwrap(ParseErrorPolicy(v)); });
  m.def(
      "parse_size", [](const std::string& text) { return Unwrap(ParseSize(text)); },
      "'200GiB', '500M', '1.5TiB' or a byte count, as `stoker pack --shard-size` reads them");
  nb::class_<TokenizerOptions>(m, "TokenizerOptions",
                               "Byte-level BPE options (docs/tokenizers.md).")
      .def(nb::init<>())
      .def_rw("pattern", &TokenizerOptions::pattern)
      .def_rw("special", &TokenizerOptions::special)
      .def_rw("allow_special", &TokenizerOptions::allow_special)
      .def_rw("eos", &TokenizerOptions::eos)
      .def_rw("post_processor", &TokenizerOptions::post_processor);
  nb::class_<stream::StreamOptions>(m, "StreamOptions",
                                    "stoker.Stream's options (docs/streaming.md).")
      .def(nb::init<>())
      .def_rw("inputs", &stream::StreamOptions::inputs)
      .def_rw("tokenizer", &stream::StreamOptions::tokenizer)
      .def_rw("tokenizer_options", &stream::StreamOptions::tokenizer_options)
      .def_rw("text_field", &stream::StreamOptions::text_field)
      .def_prop_rw(
          "utf8",
          [](const stream::StreamOptions& o) { return std::string(Utf8PolicyName(o.utf8)); },
          [](stream::StreamOptions& o, const std::string& v) {
            o.utf8 = Unwrap(ParseUtf8Policy(v));
          })
      .def_rw("shuffle_buffer", &stream::StreamOptions::shuffle_buffer)
      .def_rw("steps_per_epoch", &stream::StreamOptions::steps_per_epoch)
      .def_rw("split_factor", &stream::StreamOptions::split_factor)
      .def_rw("encode_threads", &stream::StreamOptions::encode_threads)
      .def_rw("scan_cache_dir", &stream::StreamOptions::scan_cache_dir)
      .def_rw("train_on", &stream::StreamOptions::train_on)
      .def_rw("chat_template", &stream::StreamOptions::chat_template)
      .def_rw("chat_field", &stream::StreamOptions::chat_field);
  m.def("default_num_workers", &DefaultNumWorkers,
        "Worker threads used for num_workers=0: cores / LOCAL_WORLD_SIZE, at least 1.");
}

}  // namespace stoker::python
