// stoker.pack: the library behind `stoker pack`.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <vector>

#include "ingest/pack.h"
#include "ingest/pack_args.h"
#include "ingest/pack_run.h"
#include "ingest/pack_task.h"
#include "ingest/task_merge.h"
#include "register.h"

namespace nb = nanobind;

namespace stoker::python {
namespace {

nb::dict RecordsToDict(const RecordPackResult& r) {
  nb::dict d;
  d["files_read"] = r.files_read;
  d["files_skipped"] = r.files_skipped;
  d["records"] = r.records;
  d["output_files"] = r.output_files;
  d["output_bytes"] = r.output_bytes;
  d["output_dir"] = r.output_dir;
  return d;
}

nb::dict PackToDict(const PackArgs& args) {
  Result<PackRunResult> result = [&] {
    nb::gil_scoped_release release;
    return RunPackArgs(args);
  }();
  PackRunResult run = Unwrap(std::move(result));
  nb::dict d;
  d["output"] = run.output.empty() ? args.output : run.output;
  d["format"] = args.format;
  if (run.records) d["records"] = RecordsToDict(*run.records);
  if (!run.receipt.empty()) {
    d["receipt"] = run.receipt;
    d["skipped"] = run.skipped;
  }
  if (!run.pack) return d;
  const PackResult& r = *run.pack;
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
         std::string text_field, std::string shard_size, int num_workers,
         std::optional<uint32_t> task_index, std::optional<uint32_t> task_count, std::string utf8,
         std::string on_error, std::string dtype, bool overwrite, std::string pattern,
         std::string special, bool allow_special, std::string eos, bool post_processor,
         std::string input_format, std::string key_field, std::string format) {
        PackArgs args;  // by name: PackArgs gained fields (key_field, input_format) since
        args.inputs = std::move(inputs);
        args.output = std::move(output);
        args.tokenizer = std::move(tokenizer);
        args.text_field = std::move(text_field);
        args.shard_size = std::move(shard_size);
        args.num_workers = num_workers;
        args.task_index = task_index;
        args.task_count = task_count;
        args.utf8 = std::move(utf8);
        args.on_error = std::move(on_error);
        args.dtype = std::move(dtype);
        args.overwrite = overwrite;
        args.tokenizer_options = {pattern, special, allow_special, eos, post_processor};
        args.input_format = std::move(input_format);
        args.key_field = std::move(key_field);
        args.format = std::move(format);
        return PackToDict(args);
      },
      nb::arg("inputs"), nb::arg("output"), nb::arg("tokenizer"), nb::arg("text_field"),
      nb::arg("shard_size"), nb::arg("num_workers"), nb::arg("task_index").none(),
      nb::arg("task_count").none(), nb::arg("utf8"), nb::arg("on_error"), nb::arg("dtype"),
      nb::arg("overwrite"), nb::arg("pattern") = "", nb::arg("special") = "",
      nb::arg("allow_special") = false, nb::arg("eos") = "", nb::arg("post_processor") = true,
      nb::arg("input_format") = "auto", nb::arg("key_field") = "", nb::arg("format") = "stoker",
      "Packs raw text into a stoker dataset (`stoker pack`); the GIL is released meanwhile.");
  m.def(
      "pack_plan",
      [](std::vector<std::string> inputs, std::string output, uint32_t task_count,
         std::string input_format) {
        PackArgs args;
        args.inputs = std::move(inputs);
        args.output = std::move(output);
        args.task_index = 0;
        args.task_count = task_count;
        args.input_format = std::move(input_format);
        Result<TaskPlan> plan = [&] {
          nb::gil_scoped_release release;
          return PlanPackTasks(args);
        }();
        TaskPlan p = Unwrap(std::move(plan));
        nb::list slices;
        for (uint32_t t = 0; t < p.task_count; ++t) {
          TaskSlice s = p.Slice(t);
          slices.append(nb::make_tuple(s.first, s.last));
        }
        return nb::make_tuple(p.ToJson(), p.checksum, slices);
      },
      nb::arg("inputs"), nb::arg("output"), nb::arg("task_count"), nb::arg("input_format"),
      "Records (or reads) the input plan of a task-split pack (`stoker pack --list`): "
      "(plan JSON, its checksum, [(first, last)] per task).");
  m.def(
      "merge_tasks",
      [](std::string output) {
        Result<Manifest> merged = [&] {
          nb::gil_scoped_release release;
          return MergeTasks(output);
        }();
        return Unwrap(std::move(merged)).ToJson();
      },
      nb::arg("output"),
      "Merges a task-split pack (`stoker merge OUTPUT`); returns the manifest JSON.");
}

}  // namespace stoker::python
