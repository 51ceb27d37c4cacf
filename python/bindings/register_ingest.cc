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
#include "option_binding.h"
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
  PackRunResult run = Released([&] { return RunPackArgs(args); });
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
  nb::class_<PackArgs> pack_args(
      m, "PackArgs", "stoker.pack's arguments, as `stoker pack` takes them (ingest/pack_args.h).");
  pack_args.def(nb::init<>())
      .def_rw("inputs", &PackArgs::inputs)
      .def_rw("task_index", &PackArgs::task_index)
      .def_rw("task_count", &PackArgs::task_count)
      .def_rw("tokenizer_options", &PackArgs::tokenizer_options);
  BindOptionRows(pack_args, PackArgsTable());
  m.def("pack", &PackToDict, nb::arg("args"),
        "Packs raw text into a stoker dataset (`stoker pack`); the GIL is released meanwhile.");
  m.def(
      "pack_plan",
      [](const PackArgs& args) {
        TaskPlan p = Released([&] { return PlanPackTasks(args); });
        nb::list slices;
        for (uint32_t t = 0; t < p.task_count; ++t) {
          TaskSlice s = p.Slice(t);
          slices.append(nb::make_tuple(s.first, s.last));
        }
        return nb::make_tuple(p.ToJson(), p.checksum, slices);
      },
      nb::arg("args"),
      "Records (or reads) the input plan of a task-split pack (`stoker pack --list`; "
      "args.task_count tasks): (plan JSON, its checksum, [(first, last)] per task).");
  m.def(
      "merge_tasks",
      [](std::string output) { return Released([&] { return MergeTasks(output); }).ToJson(); },
      nb::arg("output"),
      "Merges a task-split pack (`stoker merge OUTPUT`); returns the manifest JSON.");
}

}  // namespace stoker::python
