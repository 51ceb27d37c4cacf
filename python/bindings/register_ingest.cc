// stoker.pack: the library behind `stoker pack`.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <vector>

#include "ingest/pack.h"
#include "ingest/pack_args.h"
#include "register.h"
#include "text/tokenizer.h"

namespace nb = nanobind;

namespace stoker::python {
namespace {

Result<PackResult> RunPack(const PackArgs& args) {
  PackDestination destination;
  STOKER_ASSIGN_OR_RETURN(PackOptions options, PackOptionsFromArgs(args, &destination));
  TokenizerOptions tokenizer_options = args.tokenizer_options;
  tokenizer_options.load_threads = options.threads;  // the tables are built on pack's threads
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<Tokenizer> tokenizer,
                          OpenTokenizer(args.tokenizer, tokenizer_options));
  STOKER_ASSIGN_OR_RETURN(PackResult result, Pack(options, *tokenizer));
  STOKER_RETURN_IF_ERROR(FinishPackDestination(destination));
  return result;
}

nb::dict PackToDict(const PackArgs& args) {
  Result<PackResult> result = [&] {
    nb::gil_scoped_release release;
    return RunPack(args);
  }();
  PackResult r = Unwrap(std::move(result));
  nb::dict d;
  d["output"] = args.output;
  d["manifest_json"] = r.manifest.ToJson();
  d["input_files"] = r.input_files;
  d["total_files"] = r.total_files;
  d["elapsed_s"] = r.elapsed_s;
  nb::dict counters;
  for (const auto& [name, value] : r.counters.ToMap()) counters[nb::str(name.c_str())] = value;
  d["counters"] = counters;
  return d;
}

}  // namespace

void RegisterIngest(nb::module_& m) {
  m.def(
      "pack",
      [](std::vector<std::string> inputs, std::string output, std::string tokenizer,
         std::string text_field, std::string shard_size, int threads,
         std::optional<uint32_t> task_index, std::optional<uint32_t> task_count, std::string utf8,
         std::string bad_lines, std::string dtype, bool overwrite, std::string pattern,
         std::string special, bool allow_special, std::string eos, bool post_processor,
         std::string input_format, std::string key_field) {
        PackArgs args;  // by name: PackArgs gained fields (key_field, input_format) since
        args.inputs = std::move(inputs);
        args.output = std::move(output);
        args.tokenizer = std::move(tokenizer);
        args.text_field = std::move(text_field);
        args.shard_size = std::move(shard_size);
        args.threads = threads;
        args.task_index = task_index;
        args.task_count = task_count;
        args.utf8 = std::move(utf8);
        args.bad_lines = std::move(bad_lines);
        args.dtype = std::move(dtype);
        args.overwrite = overwrite;
        args.tokenizer_options = {pattern, special, allow_special, eos, post_processor};
        args.input_format = std::move(input_format);
        args.key_field = std::move(key_field);
        return PackToDict(args);
      },
      nb::arg("inputs"), nb::arg("output"), nb::arg("tokenizer"), nb::arg("text_field"),
      nb::arg("shard_size"), nb::arg("threads"), nb::arg("task_index").none(),
      nb::arg("task_count").none(), nb::arg("utf8"), nb::arg("bad_lines"), nb::arg("dtype"),
      nb::arg("overwrite"), nb::arg("pattern") = "", nb::arg("special") = "",
      nb::arg("allow_special") = false, nb::arg("eos") = "", nb::arg("post_processor") = true,
      nb::arg("input_format") = "auto", nb::arg("key_field") = "",
      "Packs raw text into a stoker dataset (`stoker pack`); the GIL is released meanwhile.");
}

}  // namespace stoker::python
