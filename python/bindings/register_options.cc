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

std::string_view ErrorPolicyName(ErrorPolicy p) {
  return p == ErrorPolicy::kSkip ? "skip" : "fail";
}

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

// An enum member as a str property: `name(value)` to read, `parse(str)` (a Result) to write.
template <typename Class, typename Owner, typename E, typename Name, typename Parse>
void EnumProperty(Class& cls, const char* property, E Owner::*field, Name name, Parse parse) {
  cls.def_prop_rw(
      property, [=](const Owner& o) { return std::string(name(o.*field)); },
      [=](Owner& o, const std::string& v) { o.*field = Unwrap(parse(v)); });
}

}  // namespace

void RegisterOptions(nb::module_& m) {
  nb::class_<MixturePhase>(m, "MixturePhase",
                           "One phase of a mixture schedule (docs/plan.md, \"Schedules\").")
      .def(nb::init<>())
      .def_rw("end_row", &MixturePhase::end_row)
      .def_rw("weights", &MixturePhase::weights)
      .def_rw("end_weights", &MixturePhase::end_weights);
  nb::class_<PlanOptions> plan(m, "PlanOptions", "Plan options (see docs/plan.md); enums by name.");
  plan.def(nb::init<>())
      .def_rw("seq_len", &PlanOptions::seq_len)
      .def_rw("batch_size", &PlanOptions::batch_size)
      .def_rw("world_size", &PlanOptions::world_size)
      .def_rw("rank", &PlanOptions::rank)
      .def_rw("seed", &PlanOptions::seed)
      .def_rw("block_shards", &PlanOptions::block_shards)
      .def_rw("bestfit_window", &PlanOptions::bestfit_window)
      .def_rw("phases", &PlanOptions::phases)
      .def_rw("run_rows", &PlanOptions::run_rows)
      .def_rw("dataset_names", &PlanOptions::dataset_names)
      .def_prop_rw(
          "drop_last",  // torch's name for remainder "drop_last" (True) or "pad" (False)
          [](const PlanOptions& o) { return o.remainder == RemainderPolicy::kDropLast; },
          [](PlanOptions& o, bool v) {
            o.remainder = v ? RemainderPolicy::kDropLast : RemainderPolicy::kPad;
          });
  EnumProperty(plan, "shuffle", &PlanOptions::shuffle, ShuffleModeName, ParseShuffleMode);
  EnumProperty(plan, "pack", &PlanOptions::pack, PackModeName, ParsePackMode);
  nb::class_<LoaderOptions, PlanOptions> loader(
      m, "LoaderOptions", "Loader options, plan options included (see docs/loader.md).");
  loader.def(nb::init<>())
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
      .def_rw("cache_size_bytes", &LoaderOptions::cache_size_bytes);
  EnumProperty(loader, "token_dtype", &LoaderOptions::token_dtype, TokenDTypeName,
               ParseOutputDType);
  EnumProperty(loader, "long_documents", &LoaderOptions::long_documents, LongDocumentsName,
               ParseLongDocuments);
  EnumProperty(loader, "on_error", &LoaderOptions::on_error, ErrorPolicyName, ParseErrorPolicy);
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
  using stream::StreamOptions;
  nb::class_<StreamOptions> stream(m, "StreamOptions",
                                   "stoker.Stream's options (docs/streaming.md).");
  stream.def(nb::init<>())
      .def_rw("inputs", &StreamOptions::inputs)
      .def_rw("tokenizer", &StreamOptions::tokenizer)
      .def_rw("tokenizer_options", &StreamOptions::tokenizer_options)
      .def_rw("text_field", &StreamOptions::text_field)
      .def_rw("shuffle_buffer", &StreamOptions::shuffle_buffer)
      .def_rw("steps_per_epoch", &StreamOptions::steps_per_epoch)
      .def_rw("split_factor", &StreamOptions::split_factor)
      .def_rw("scan_cache_dir", &StreamOptions::scan_cache_dir)
      .def_rw("train_on", &StreamOptions::train_on)
      .def_rw("chat_template", &StreamOptions::chat_template)
      .def_rw("chat_field", &StreamOptions::chat_field);
  EnumProperty(stream, "utf8", &StreamOptions::utf8, Utf8PolicyName, ParseUtf8Policy);
}

}  // namespace stoker::python
