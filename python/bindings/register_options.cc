// The option structs for Python, bound from their option tables (common/option_table.h):
// PlanOptions, LoaderOptions (a PlanOptions), TokenizerOptions, StreamOptions and PackArgs
// (register_ingest.cc); enums as the names the CLI uses ("global", "bestfit", "int64", "skip",
// ...). `option_table(name)` gives each table to Python (names, keywords, flags, defaults, docs).
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "ingest/pack_args.h"
#include "loader/loader_options_table.h"
#include "option_binding.h"
#include "plan/plan_options_table.h"
#include "register.h"
#include "stream/stream_options_table.h"
#include "text/tokenizer_options_table.h"

namespace nb = nanobind;

namespace stoker::python {

void RegisterOptions(nb::module_& m) {
  nb::class_<MixturePhase>(m, "MixturePhase",
                           "One phase of a mixture schedule (docs/plan.md, \"Schedules\").")
      .def(nb::init<>())
      .def_rw("end_row", &MixturePhase::end_row)
      .def_rw("weights", &MixturePhase::weights)
      .def_rw("end_weights", &MixturePhase::end_weights);
  nb::class_<PlanOptions> plan(m, "PlanOptions", "Plan options (see docs/plan.md); enums by name.");
  plan.def(nb::init<>())
      .def_rw("phases", &PlanOptions::phases)
      .def_rw("run_rows", &PlanOptions::run_rows)
      .def_rw("dataset_names", &PlanOptions::dataset_names);
  BindOptionRows(plan, PlanOptionTable());
  plan.def_prop_rw(
      "drop_last",  // the deprecated spelling of remainder "drop_last" (True) or "pad" (False)
      [](const PlanOptions& o) { return o.remainder == RemainderPolicy::kDropLast; },
      [](PlanOptions& o, bool v) {
        o.remainder = v ? RemainderPolicy::kDropLast : RemainderPolicy::kPad;
      });
  nb::class_<LoaderOptions, PlanOptions> loader(
      m, "LoaderOptions", "Loader options, plan options included (see docs/loader.md).");
  loader.def(nb::init<>());
  BindOptionRows(loader, LoaderOptionTable(), LoaderOwnOptionsBegin());
  nb::class_<TokenizerOptions> tokenizer(m, "TokenizerOptions",
                                         "Byte-level BPE options (docs/tokenizers.md).");
  tokenizer.def(nb::init<>());
  BindOptionRows(tokenizer, TokenizerOptionTable());
  nb::class_<StreamOptions> stream(m, "StreamOptions",
                                   "stoker.Stream's options (docs/streaming.md).");
  stream.def(nb::init<>())
      .def_rw("inputs", &StreamOptions::inputs)
      .def_rw("tokenizer_options", &StreamOptions::tokenizer_options);
  BindOptionRows(stream, stream::StreamOptionTable());
  m.def(
      "option_table",
      [](const std::string& name) -> nb::list {
        if (name == "plan") return OptionTableList(PlanOptionTable());
        if (name == "loader") return OptionTableList(LoaderOptionTable());
        if (name == "stream") return OptionTableList(stream::StreamOptionTable());
        if (name == "tokenizer") return OptionTableList(TokenizerOptionTable());
        if (name == "pack") return OptionTableList(PackArgsTable());
        throw nb::value_error(
            ("option_table: no table '" + name + "' (plan, loader, stream, tokenizer, pack)")
                .c_str());
      },
      nb::arg("name"),
      "The option table of an options struct: one dict per option with name, python (keyword), "
      "cli (flag), kind, doc, default, choices and min.");
}

}  // namespace stoker::python
