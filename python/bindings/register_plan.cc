// stoker.plan: the deterministic plan behind `stoker plan`, for notebooks and scripts.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "loader/mixture_spec.h"
#include "loader/planned_dataset.h"
#include "plan/mixture_file.h"
#include "plan/state_edit.h"
#include "plan/state_skips.h"
#include "register.h"
#include "stoker/plan.h"
#include "stoker/token_source.h"

namespace nb = nanobind;

namespace stoker::python {
namespace {

// Not thread-safe for Python callers beyond what Plan is (Plan itself is thread-safe).
struct PyPlan {
  std::unique_ptr<Plan> plan;
  std::vector<PlannedDataset> datasets;  // as the loader plans them (long_documents applied)
};

Result<std::unique_ptr<PyPlan>> CreatePlan(const std::vector<DatasetSpec>& specs,
                                           const LoaderOptions& options) {
  auto out = std::make_unique<PyPlan>();
  std::vector<PlanDataset> datasets;
  for (const auto& [path, weight] : specs) {
    STOKER_ASSIGN_OR_RETURN(
        PlannedDataset d,
        OpenPlannedDataset(path, weight, options.seq_len, options.pack, options.long_documents));
    datasets.push_back(d.plan);
    out->datasets.push_back(std::move(d));
  }
  STOKER_ASSIGN_OR_RETURN(
      out->plan, Plan::Create(std::move(datasets), PlanOptionsFor(options), SharedWindowCounter()));
  return out;
}

// The same fields as `stoker plan --json` prints for a batch.
nb::dict BatchToDict(const Batch& b) {
  nb::list rows, repeated;
  for (size_t i = 0; i < b.rows.size(); ++i) {
    nb::list pieces;
    for (const RowPiece& p : b.rows[i].pieces) {
      pieces.append(nb::make_tuple(p.dataset, p.document, p.offset, p.length));
    }
    rows.append(pieces);
    if (b.rows[i].repeated) repeated.append(i);
  }
  nb::dict d;
  d["epoch"] = b.position.epoch;
  d["step"] = b.step;
  d["rank"] = b.rank;
  d["first_row"] = b.position.rows_consumed;
  d["rows"] = rows;
  d["repeated"] = repeated;
  return d;
}

// The same fields as `stoker plan --stats --json` prints under "packing".
nb::dict PackingToDict(const PyPlan& py, uint64_t epoch) {
  const Plan& plan = *py.plan;
  PackingStats p = plan.ComputePackingStats(epoch);
  nb::dict d;
  d["mode"] = std::string(PackModeName(plan.options().pack));
  d["rows"] = p.rows;
  d["real_tokens"] = p.real_tokens;
  d["padding_tokens"] = p.padding_tokens;
  d["truncated_tokens"] = p.truncated_tokens;
  d["documents"] = p.documents;
  d["empty_documents"] = p.empty_documents;
  d["documents_split"] = p.documents_split;
  d["real_token_share"] = p.real_token_share();
  d["padding_share"] = p.padding_share();
  Result<TrainedShare> trained =
      ComputeTrainedShare(plan, py.datasets, p.real_token_share(), epoch);
  d["trained_token_share"] = trained.ok() ? nb::cast(trained->share) : nb::none();
  return d;
}

// A Plan method of one position, bound as f(epoch, rows_consumed).
template <typename R>
auto AtPosition(R (Plan::*f)(const PlanPosition&) const) {
  return [f](const PyPlan& p, uint64_t epoch, uint64_t rows) {
    return (*p.plan.*f)({epoch, rows});
  };
}

}  // namespace

void RegisterPlan(nb::module_& m) {
  m.def(
      "skip_steps_in_state",
      [](const std::string& state_json, uint64_t first, uint64_t last) {
        return Unwrap(SkipStepsInState(state_json, first, last));
      },
      nb::arg("state_json"), nb::arg("first"), nb::arg("last"),
      "The state with steps first..last of its epoch marked skipped (src/plan/state_edit.h).");
  m.def(
      "drop_source_in_state",
      [](const std::string& state_json, const std::string& name) {
        return Unwrap(DropSourceInState(state_json, name));
      },
      nb::arg("state_json"), nb::arg("name"),
      "The state with dataset `name` left out on resume (src/plan/state_edit.h).");
  m.def(
      "skip_documents_in_state",
      [](const std::string& state_json, const std::vector<std::string>& ids) {
        return Unwrap(SkipDocumentsInState(state_json, ids));
      },
      nb::arg("state_json"), nb::arg("ids"),
      "The state with documents `ids` quarantined on resume (src/plan/state_edit.h).");
  m.def(
      "read_mixture",
      [](const std::string& path, uint64_t seq_len, uint64_t global_batch_rows,
         std::optional<std::string> total_tokens, std::optional<uint64_t> total_steps) {
        plan::RunLength run;
        if (total_tokens) run.total_tokens = Unwrap(plan::ParseCount(*total_tokens));
        run.total_steps = total_steps;
        MixtureSpec spec = Unwrap(ReadMixtureSpec(path, seq_len, global_batch_rows, run));
        nb::dict d;
        d["names"] = spec.names;
        d["paths"] = spec.paths;
        d["weights"] = spec.weights;
        d["phases"] = spec.phases;
        d["run_rows"] = spec.run_rows;
        d["tokens_per_step_schedule"] = spec.tokens_per_step_schedule;
        return d;
      },
      nb::arg("path"), nb::arg("seq_len"), nb::arg("global_batch_rows"),
      nb::arg("total_tokens").none(), nb::arg("total_steps").none(),
      "A mixture file's datasets and its phases resolved for a run (stoker.Mixture).");
  nb::class_<PyPlan>(m, "Plan", "The deterministic plan (see docs/plan.md). Thread-safe.")
      .def_static(
          "create",
          [](const std::vector<DatasetSpec>& datasets, const LoaderOptions& options) {
            return Released([&] { return CreatePlan(datasets, options); });
          },
          nb::arg("datasets"), nb::arg("options"))
      .def_prop_ro("fingerprint", [](const PyPlan& p) { return p.plan->fingerprint(); })
      .def_prop_ro("global_batch_rows", [](const PyPlan& p) { return p.plan->global_batch_rows(); })
      .def(
          "rows_in_epoch", [](const PyPlan& p, uint64_t e) { return p.plan->rows_in_epoch(e); },
          nb::arg("epoch"), nb::call_guard<nb::gil_scoped_release>())
      .def(
          "steps_per_epoch", [](const PyPlan& p, uint64_t e) { return p.plan->steps_per_epoch(e); },
          nb::arg("epoch") = 0, nb::call_guard<nb::gil_scoped_release>())
      .def(
          "batch",
          [](const PyPlan& p, uint64_t epoch, uint64_t step, std::optional<uint32_t> rank) {
            const uint32_t r = rank ? *rank : p.plan->options().rank;
            return BatchToDict(Released([&] { return p.plan->GetBatch(epoch, step, r); }));
          },
          nb::arg("epoch"), nb::arg("step"), nb::arg("rank").none() = nb::none(),
          "One rank's rows for one step: the dict `stoker plan --json` prints per line.")
      .def(
          "make_state_json",
          [](const PyPlan& p, uint64_t epoch, uint64_t rows) {
            return p.plan->MakeState({epoch, rows}).ToJson();
          },
          nb::arg("epoch"), nb::arg("rows_consumed"))
      .def(
          "restore",
          [](const PyPlan& p, const std::string& json, bool force) {
            PlanState state = Unwrap(PlanState::FromJson(json));
            PlanPosition pos = Unwrap(p.plan->Restore(state, force));
            // The state's edits (src/plan/state_skips.h), as the Loader and `stoker plan --state`
            // honour them: a dataset it drops must not be in this plan; a position inside a skip
            // moves to its end.
            for (const std::string& drop : state.drops) {
              for (const std::string& name : p.plan->options().dataset_names) {
                if (name != drop) continue;
                throw nb::value_error(("the state drops dataset '" + drop +
                                       "', which this plan still has: plan the mixture without "
                                       "it (as stoker.Loader.load_state_dict does), then restore")
                                          .c_str());
              }
            }
            pos = SkipOver(*p.plan, pos, state.skips);
            return std::make_pair(pos.epoch, pos.rows_consumed);
          },
          nb::arg("state_json"), nb::arg("force") = false,
          "(epoch, rows_consumed) where a checkpoint resumes: its position, or the end of the "
          "skip (stoker.edit_state, `stoker resume-edit --skip-steps`) it lies in (SkipOver); "
          "ValueError if it belongs to another plan or drops a dataset this plan has.")
      .def(
          "packing_stats", [](const PyPlan& p, uint64_t epoch) { return PackingToDict(p, epoch); },
          nb::arg("epoch") = 0)
      .def("phase_at", AtPosition(&Plan::PhaseAt), nb::arg("epoch"), nb::arg("rows_consumed"))
      .def("dataset_rows_before", AtPosition(&Plan::DatasetRowsBefore), nb::arg("epoch"),
           nb::arg("rows_consumed"), nb::call_guard<nb::gil_scoped_release>())
      .def("dataset_epochs", AtPosition(&Plan::DatasetEpochs), nb::arg("epoch"),
           nb::arg("rows_consumed"));
}

}  // namespace stoker::python
