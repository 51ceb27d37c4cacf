// stoker.Loader's core: batches leave C++ as DLPack tensors whose owner keeps the LoaderBatch (and
// so its ring slot) alive; the slot returns to the ring when the last tensor of the batch dies.
#include <Python.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "plan/state_skips.h"
#include "plan/token_step_edits.h"
#include "plan/token_step_planner.h"
#include "register.h"
#include "stoker/loader.h"
#include "stoker/stream.h"

namespace nb = nanobind;

namespace stoker::python {
namespace {

// Not thread-safe: one Python thread at a time (the Python Loader is not shared across threads).
struct PyLoader {
  std::unique_ptr<Loader> loader;
  // Each dataset's SourceCount summed over the batches delivered since open (stoker.metrics
  // reads it once per window: nothing per step crosses into Python).
  std::vector<SourceCount> source_totals;

  ~PyLoader() { Close(); }

  // Joins the workers with the GIL released; the ring lives on while tensors still point into it.
  void Close() {
    if (!loader) return;
    if (PyGILState_Check() && !IsFinalizing()) {
      nb::gil_scoped_release release;
      loader.reset();
    } else {
      loader.reset();
    }
  }

  Loader& get() {
    if (!loader) {
      PyErr_SetString(PyExc_ValueError, "the loader is closed");
      throw nb::python_error();
    }
    return *loader;
  }

  static bool IsFinalizing() {
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsFinalizing();
#else
    return _Py_IsFinalizing();
#endif
  }
};

// One delivered batch, shared by the Python wrapper and every tensor made from it.
struct PyBatch {
  std::shared_ptr<LoaderBatch> batch;
};

nb::dlpack::dtype ToDLPack(TokenDType dtype) {
  switch (dtype) {
    case TokenDType::kInt32:
      return nb::dtype<int32_t>();
    case TokenDType::kUint8:
      return nb::dtype<uint8_t>();
    default:
      return nb::dtype<int64_t>();
  }
}

template <typename... Framework>
nb::object MakeArray(const TensorView& v, nb::handle owner) {
  size_t shape[3];
  for (int i = 0; i < v.ndim; ++i) shape[i] = static_cast<size_t>(v.shape[i]);
  const int device_type = v.device >= 0 ? nb::device::cuda::value : nb::device::cpu::value;
  nb::ndarray<Framework...> array(v.data, static_cast<size_t>(v.ndim), shape, owner, nullptr,
                                  ToDLPack(v.dtype), device_type, v.device >= 0 ? v.device : 0);
  return array.cast();
}

nb::object ToFramework(const TensorView& view, const std::string& framework, nb::handle owner) {
  if (framework == "torch") return MakeArray<nb::pytorch>(view, owner);
  if (framework == "numpy") return MakeArray<nb::numpy>(view, owner);
  return MakeArray<>(view, owner);
}

// {name: array} for every tensor of the batch (attention_mask only when built). The arrays share
// one capsule holding a reference to the batch.
nb::dict Arrays(const PyBatch& b, const std::string& framework, bool device) {
  const LoaderBatch& lb = *b.batch;
  if (device && !lb.on_device()) {
    PyErr_SetString(PyExc_ValueError, "this batch has no device copy (the loader has no device)");
    throw nb::python_error();
  }
  auto* holder = new std::shared_ptr<LoaderBatch>(b.batch);
  nb::capsule owner(holder,
                    [](void* p) noexcept { delete static_cast<std::shared_ptr<LoaderBatch>*>(p); });
  const std::pair<const char*, TensorView> views[] = {
      {"input_ids", device ? lb.device_input_ids() : lb.input_ids()},
      {"labels", device ? lb.device_labels() : lb.labels()},
      {"position_ids", device ? lb.device_position_ids() : lb.position_ids()},
      {"segment_ids", device ? lb.device_segment_ids() : lb.segment_ids()},
      {"cu_seqlens", device ? lb.device_cu_seqlens() : lb.cu_seqlens()},
      {"attention_mask", device ? lb.device_attention_mask() : lb.attention_mask()},
      {"loss_mask", device ? lb.device_loss_mask() : lb.loss_mask()},
      {"seq_idx", device ? lb.device_seq_idx() : lb.seq_idx()},
      {"cu_seqlens_padded", device ? lb.device_cu_seqlens_padded() : lb.cu_seqlens_padded()},
      {"flex_block_tables", device ? lb.device_flex_block_tables() : lb.flex_block_tables()},
  };
  nb::dict out;
  for (const auto& [name, view] : views) {
    if (view.data != nullptr) out[name] = ToFramework(view, framework, owner);
  }
  return out;
}

// The host copy of cu_seqlens in the ring slot (for a device batch too), so that varlen attention
// reads its offsets without a device-to-host sync.
// `padded`: cu_seqlens_padded's (None when the batch has none).
nb::object HostCuSeqlens(const PyBatch& b, const std::string& framework, bool padded) {
  if (padded && b.batch->cu_seqlens_padded().data == nullptr) return nb::none();
  auto* holder = new std::shared_ptr<LoaderBatch>(b.batch);
  nb::capsule owner(holder,
                    [](void* p) noexcept { delete static_cast<std::shared_ptr<LoaderBatch>*>(p); });
  return ToFramework(padded ? b.batch->cu_seqlens_padded() : b.batch->cu_seqlens(), framework,
                     owner);
}

std::unique_ptr<PyLoader> OpenLoader(const std::vector<DatasetSpec>& specs,
                                     const LoaderOptions& options,
                                     const std::optional<std::string>& resume_json) {
  std::vector<LoaderDataset> datasets;
  for (const auto& [path, weight] : specs) datasets.push_back({path, nullptr, weight});
  std::optional<PlanState> resume;
  if (resume_json) resume = Unwrap(PlanState::FromJson(*resume_json));
  auto out = std::make_unique<PyLoader>();
  out->loader = Released(
      [&] { return Loader::Open(std::move(datasets), options, resume ? &*resume : nullptr); });
  return out;
}

// The provenance of the step that starts at (epoch, rows_consumed) (normalized, as the loader
// would take it), as JSON (StepProvenance::ToJson).
std::string ProvenanceJson(PyLoader& self, uint64_t epoch, uint64_t rows_consumed) {
  Loader& loader = self.get();
  return Released([&] { return loader.Explain({epoch, rows_consumed}); }).ToJson();
}

// One piece of a step for stoker.metrics: (row, dataset, row_offset, length, offset, dataset_epoch,
// phase), the last two -1 where the plan has none.
using StepPiece = std::tuple<uint64_t, uint32_t, uint64_t, uint64_t, uint64_t, int64_t, int64_t>;

// The pieces of the step that starts at (epoch, rows_consumed): what provenance_json says, without
// the JSON and the paths (stoker.metrics counts them every step).
std::vector<StepPiece> StepPieces(PyLoader& self, uint64_t epoch, uint64_t rows_consumed) {
  Loader& loader = self.get();
  StepProvenance step = Released([&] { return loader.Explain({epoch, rows_consumed}); });
  std::vector<StepPiece> out;
  for (uint64_t r = 0; r < step.rows.size(); ++r) {
    for (const PieceProvenance& p : step.rows[r].pieces) {
      out.emplace_back(r, p.dataset, p.row_offset, p.length, p.offset,
                       p.dataset_epoch ? static_cast<int64_t>(*p.dataset_epoch) : -1,
                       p.phase ? static_cast<int64_t>(*p.phase) : -1);
    }
  }
  return out;
}

// A stream resumes by restore(), after it is open.
std::unique_ptr<PyLoader> OpenStream(const StreamOptions& so, const LoaderOptions& options) {
  auto out = std::make_unique<PyLoader>();
  out->loader = Released([&] { return OpenStreamLoader(so, options); });
  return out;
}

std::optional<PyBatch> NextBatch(PyLoader& self) {
  Loader& loader = self.get();
  ThrowIfSignalled();
  Result<std::optional<LoaderBatch>> next = [&] {
    nb::gil_scoped_release release;
    return loader.Next();
  }();
  // Ctrl-C pressed while we waited: stop here (the batch, if any, goes back to the ring).
  ThrowIfSignalled();
  std::optional<LoaderBatch> batch = Unwrap(std::move(next));
  if (!batch) return std::nullopt;
  const std::vector<SourceCount>& counts = batch->source_counts();
  if (self.source_totals.size() < counts.size()) self.source_totals.resize(counts.size());
  for (size_t i = 0; i < counts.size(); ++i) {
    SourceCount& t = self.source_totals[i];
    t.tokens += counts[i].tokens;
    t.trained_tokens += counts[i].trained_tokens;
    t.documents += counts[i].documents;
    t.pieces += counts[i].pieces;
  }
  return PyBatch{std::make_shared<LoaderBatch>(std::move(*batch))};
}

nb::dict StatsToDict(const LoaderStats& s) {
  nb::dict d;
  d["batches"] = s.batches;
  d["samples"] = s.samples;
  d["tokens"] = s.tokens;
  d["real_tokens"] = s.real_tokens;
  d["trained_tokens"] = s.trained_tokens;
  d["long_documents_dropped"] = s.long_documents_dropped;
  d["long_documents_truncated"] = s.long_documents_truncated;
  d["skipped_documents"] = s.skipped_documents;
  d["elapsed_s"] = s.elapsed_s;
  d["tokens_per_s"] = s.tokens_per_s;
  d["samples_per_s"] = s.samples_per_s;
  d["wait_last_ms"] = s.wait_last_ms;
  d["wait_total_ms"] = s.wait_total_ms;
  d["wait_max_ms"] = s.wait_max_ms;
  d["read_s"] = s.read_s;
  d["assemble_s"] = s.assemble_s;
  d["copy_s"] = s.copy_s;
  d["num_workers"] = s.num_workers;
  d["ring_slots"] = s.ring_slots;
  d["slots_ready"] = s.slots_ready;
  d["slots_in_use"] = s.slots_in_use;
  d["mean_slots_ready"] = s.mean_slots_ready;
  d["pinned"] = s.pinned;
  d["device_batches"] = s.device_batches;
  d["monitor_batches"] = s.monitor_batches;
  d["monitor_stall_share"] = s.monitor_stall_share;
  d["monitor_consumed_tokens_per_s"] = s.monitor_consumed_tokens_per_s;
  d["monitor_deliverable_tokens_per_s"] = s.monitor_deliverable_tokens_per_s;
  d["monitor_ratio"] = s.monitor_ratio;
  d["monitor_warnings"] = s.monitor_warnings;
  d["monitor_warned"] = s.monitor_warned;
  nb::dict requests;
  requests["GET"] = s.storage.get;
  requests["HEAD"] = s.storage.head;
  requests["LIST"] = s.storage.list;
  requests["PUT"] = s.storage.put;
  nb::dict storage;
  storage["requests"] = requests;
  storage["failed_requests"] = s.storage.failed;
  storage["retries"] = s.storage.retries;
  storage["bytes_read"] = s.storage.bytes_read;
  storage["cache_hits"] = s.storage.cache_hits;
  storage["request_s"] = s.storage.request_us * 1e-6;
  storage["ranged_datasets"] = s.storage.ranged_datasets;
  storage["whole_shard_datasets"] = s.storage.whole_shard_datasets;
  storage["pieces_read_ahead"] = s.storage.pieces_read_ahead;
  storage["pieces_read_on_demand"] = s.storage.pieces_read_on_demand;
  storage["read_ahead_requests"] = s.storage.read_ahead_requests;
  d["storage"] = storage;
  return d;
}

// A planner with steps and states: the indexed plan's or the stream's (they have a fingerprint).
const BatchPlanner& PlannerOf(PyLoader& self) {
  const BatchPlanner& planner = self.get().planner();
  if (planner.Fingerprint().empty()) {
    PyErr_SetString(PyExc_TypeError, "the synthetic loader has no plan (it never ends)");
    throw nb::python_error();
  }
  return planner;
}

// The planner of steps counted in tokens (TypeError for any other).
const TokenStepPlanner& TokenStepsOf(PyLoader& self) {
  auto* t = dynamic_cast<const TokenStepPlanner*>(&self.get().planner());
  if (t == nullptr) {
    PyErr_SetString(PyExc_TypeError, "the loader does not count its steps in tokens");
    throw nb::python_error();
  }
  return *t;
}

}  // namespace

void RegisterLoader(nb::module_& m) {
  nb::class_<PyBatch>(m, "Batch", "One delivered batch; its tensors keep its ring slot alive.")
      .def_prop_ro("epoch", [](const PyBatch& b) { return b.batch->epoch(); })
      .def_prop_ro("step", [](const PyBatch& b) { return b.batch->step(); })
      .def_prop_ro("on_device", [](const PyBatch& b) { return b.batch->on_device(); })
      .def_prop_ro(
          "ends_epoch",
          [](const PyBatch& b) { return b.batch->position_after().epoch != b.batch->epoch(); })
      .def("arrays", &Arrays, nb::arg("framework"), nb::arg("device") = false,
           "{name: array} without a copy; framework is 'torch', 'numpy' or 'dlpack'.")
      .def("host_cu_seqlens", &HostCuSeqlens, nb::arg("framework"), nb::arg("padded") = false,
           "cu_seqlens in host memory (the ring slot), without a copy, for a device batch too.")
      .def_prop_ro("max_seqlen", [](const PyBatch& b) { return b.batch->max_seqlen(); })
      .def_prop_ro("real_tokens", [](const PyBatch& b) { return b.batch->real_tokens(); })
      .def_prop_ro("trained_tokens", [](const PyBatch& b) { return b.batch->trained_tokens(); })
      .def_prop_ro(
          "step_figures",
          [](const PyBatch& b) -> nb::object {
            const std::optional<StepFigures>& f = b.batch->step_figures();
            if (!f) return nb::none();
            nb::dict d;
            d["global_tokens"] = f->global_tokens;
            if (f->global_trained_known) d["global_trained_tokens"] = f->global_trained_tokens;
            d["step_tokens"] = f->step_tokens;
            d["step_sum_l2"] = f->step_sum_l2;
            d["step_imbalance"] = f->step_imbalance;
            d["step_budget"] = f->step_budget;
            d["microbatch"] = f->microbatch;
            d["microbatches"] = f->microbatches;
            return d;
          },
          "Steps counted in tokens: the figures of this microbatch's step (a dict), else None.")
      .def_prop_ro("position_after",
                   [](const PyBatch& b) {
                     const PlanPosition& p = b.batch->position_after();
                     return std::make_pair(p.epoch, p.rows_consumed);
                   })
      .def(
          "state_after_json",
          [](const PyBatch& b) {
            nb::gil_scoped_release release;  // the first call may fingerprint a new input
            return b.batch->state_after().ToJson();
          },
          "The checkpoint that resumes right after this batch, as JSON.")
      .def(
          "wait_on_stream",
          [](PyBatch& b, uintptr_t stream) {
            ThrowIfError(b.batch->WaitOnStream(reinterpret_cast<void*>(stream)));
          },
          nb::arg("cuda_stream"), "Makes a CUDA stream wait for this batch's copy (on the GPU).");

  nb::class_<PyLoader>(m, "Loader", "The C++ loader. Not thread-safe: one consumer at a time.")
      .def_static("open", &OpenLoader, nb::arg("datasets"), nb::arg("options"),
                  nb::arg("resume_json").none() = nb::none())
      .def_static(
          "open_synthetic",
          [](const LoaderOptions& options) {
            auto out = std::make_unique<PyLoader>();
            out->loader = Released([&] { return Loader::OpenSynthetic(options); });
            return out;
          },
          nb::arg("options"))
      .def_static("open_stream", &OpenStream, nb::arg("stream"), nb::arg("options"))
      .def("next", &NextBatch,
           "The next batch, or None once at the end of each epoch. Releases the GIL.")
      .def("state_json", [](PyLoader& self) { return self.get().State().ToJson(); })
      .def("provenance_json", &ProvenanceJson, nb::arg("epoch"), nb::arg("rows_consumed"),
           "The provenance of the step starting there, as JSON. Releases the GIL.")
      .def(
          "source_totals",
          [](PyLoader& self) {
            std::vector<std::tuple<uint64_t, uint64_t, uint64_t, uint64_t>> out;
            for (const SourceCount& t : self.source_totals) {
              out.emplace_back(t.tokens, t.trained_tokens, t.documents, t.pieces);
            }
            return out;
          },
          "(tokens, trained_tokens, documents, pieces) per dataset over the batches delivered "
          "since open (stoker.metrics).")
      .def("step_pieces", &StepPieces, nb::arg("epoch"), nb::arg("rows_consumed"),
           "The step's pieces as (row, dataset, row_offset, length, offset, dataset_epoch, "
           "phase) tuples (stoker.metrics). Releases the GIL.")
      .def(
          "restore",
          [](PyLoader& self, const std::string& json) {
            PlanState state = Unwrap(PlanState::FromJson(json));
            Loader& loader = self.get();
            Released([&] { return loader.Restore(state); });
          },
          nb::arg("state_json"))
      .def(
          "elastic_state_json",
          [](PyLoader& self, const std::vector<std::string>& jsons) {
            std::vector<PlanState> states;
            for (const std::string& j : jsons) states.push_back(Unwrap(PlanState::FromJson(j)));
            const BatchPlanner& planner = self.get().planner();
            return Released([&] { return planner.ElasticState(states); }).ToJson();
          },
          nb::arg("states_json"),
          "This rank's state continuing every old rank's (a list, in rank order) on this world.")
      .def("stats", [](PyLoader& self) { return StatsToDict(self.get().Stats()); })
      .def_prop_ro("has_plan",
                   [](PyLoader& self) { return !self.get().planner().Fingerprint().empty(); })
      .def_prop_ro("fingerprint", [](PyLoader& self) { return PlannerOf(self).Fingerprint(); })
      .def_prop_ro("num_workers", [](PyLoader& self) { return self.get().options().num_workers; })
      .def(
          "steps_per_epoch",
          [](PyLoader& self, uint64_t epoch) {
            const BatchPlanner& planner = PlannerOf(self);
            return Released([&] { return planner.StepsPerEpoch(epoch); });
          },
          nb::arg("epoch"))
      .def(
          "steps_remaining",
          [](PyLoader& self, uint64_t epoch, uint64_t rows, const std::string& skips_json) {
            const BatchPlanner& planner = PlannerOf(self);
            return Released([&]() -> Result<uint64_t> {
              const Plan* plan = planner.plan();
              if (plan != nullptr && !skips_json.empty()) {
                STOKER_ASSIGN_OR_RETURN(StateEdits edits, ReadStateEdits(skips_json));
                return StepsRemainingWithSkips(*plan, {epoch, rows}, edits.skips);
              }
              // Skip edits of steps counted in tokens (by step index; token_step_edits.h).
              if (auto* t = dynamic_cast<const TokenStepPlanner*>(&planner);
                  t != nullptr && !skips_json.empty()) {
                STOKER_ASSIGN_OR_RETURN(StateEdits edits, ReadStateEdits(skips_json));
                return TokenBatchesRemaining(*t, {epoch, rows}, edits.skips);
              }
              // Every planner counts its own (steps counted in tokens: microbatches).
              return planner.BatchesRemaining({epoch, rows});
            });
          },
          nb::arg("epoch"), nb::arg("rows_consumed"), nb::arg("skips_json") = "",
          "Steps left in `epoch` from that position (Plan::steps_remaining); with `skips_json` "
          "(a state's {\"skip\": [...]}) less the steps its skips leave out "
          "(StepsRemainingWithSkips, src/plan/state_skips.h).")
      .def(
          "token_step_index",
          [](PyLoader& self, uint64_t epoch, uint64_t rows) {
            const TokenStepPlanner& t = TokenStepsOf(self);
            return Released([&]() -> Result<uint64_t> {
              STOKER_ASSIGN_OR_RETURN(TokenStepPlanner::Located at, t.Locate({epoch, rows}));
              return at.index;
            });
          },
          nb::arg("epoch"), nb::arg("rows_consumed"),
          "Steps counted in tokens: the index in its epoch of the step holding that position.")
      .def(
          "token_step_start",
          [](PyLoader& self, uint64_t epoch, uint64_t index) {
            const TokenStepPlanner& t = TokenStepsOf(self);
            PlanPosition p = Released([&] { return t.StepStart(epoch, index); });
            return std::make_pair(p.epoch, p.rows_consumed);
          },
          nb::arg("epoch"), nb::arg("index"),
          "Steps counted in tokens: (epoch, rows_consumed) of step `index`'s first microbatch "
          "((epoch + 1, 0) past the epoch's last step).")
      .def(
          "make_state_json",
          [](PyLoader& self, uint64_t epoch, uint64_t rows) {
            return PlannerOf(self).MakeState({epoch, rows}).ToJson();
          },
          nb::arg("epoch"), nb::arg("rows_consumed"))
      .def("close", &PyLoader::Close, "Stops and joins the workers (the GIL is released).");
}

}  // namespace stoker::python
