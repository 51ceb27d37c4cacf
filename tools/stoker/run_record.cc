#include "run_record.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "loader/loader_options_table.h"
#include "plan/plan_options_table.h"
#include "stoker/window_counter.h"
#include "stream_run_record.h"

namespace stoker::cli {
namespace {

using Json = nlohmann::json;

// The plan of `flags`, continued from `resume` when there is one (a mixture edit continues each
// dataset's order; otherwise the state's position), starting at run step `first_step`.
// The refusal of a plan whose fingerprint is not the one the run recorded.
Status CheckRecorded(const Plan& plan, const std::string& recorded, const PlanFlags& flags) {
  if (recorded.empty() || recorded == plan.fingerprint()) return Status::OK();
  std::string paths;
  for (const std::string& d : flags.datasets) paths += (paths.empty() ? "" : ", ") + d;
  return FailedPrecondition("the plan rebuilt from " + paths + " has fingerprint " +
                            plan.fingerprint() + ", the run recorded " + recorded +
                            ": the datasets (or their paths) are not those the run used");
}

// `labels`: each dataset's name in the output (empty: the mixture's names, else its path).
// `recorded`: the fingerprint the run recorded for this plan (empty: none to check).
Result<RunSegment> OpenSegment(const PlanFlags& flags, const std::optional<PlanState>& resume,
                               uint64_t first_step, const std::vector<std::string>& labels = {},
                               const std::string& recorded = "") {
  RunSegment seg;
  seg.first_step = first_step;
  std::vector<PlanDataset> datasets;
  for (size_t i = 0; i < flags.datasets.size(); ++i) {
    STOKER_ASSIGN_OR_RETURN(PlannedDataset ds, OpenPlanDataset(flags.datasets[i], flags));
    std::string name = i < labels.size()                ? labels[i]
                       : i < flags.mixture_names.size() ? flags.mixture_names[i]
                                                        : ds.source->path();
    seg.datasets.push_back(ProvenanceDataset::FromSource(*ds.source, name));
    seg.names.push_back(std::move(name));
    datasets.push_back(std::move(ds.plan));
  }
  STOKER_ASSIGN_OR_RETURN(PlanOptions o, BuildPlanOptions(flags));
  o.rank = 0;
  STOKER_ASSIGN_OR_RETURN(seg.plan, Plan::Create(std::move(datasets), o, SharedWindowCounter()));
  if (resume &&
      !resume->skip_documents.empty()) {  // quarantined documents: the loader left them out
    STOKER_ASSIGN_OR_RETURN(DocumentSkips skips, DocumentSkips::Resolve(resume->skip_documents,
                                                                        seg.names, seg.datasets));
    seg.skips = std::make_shared<const DocumentSkips>(std::move(skips));
  }
  if (resume && seg.plan->num_datasets() > 1 && resume->fingerprint != seg.plan->fingerprint()) {
    STOKER_ASSIGN_OR_RETURN(Plan::Continued c, seg.plan->ContinueFrom(*resume));
    seg.plan = std::move(c.plan);
    seg.start = c.position;
    STOKER_RETURN_IF_ERROR(CheckRecorded(*seg.plan, recorded, flags));
    return seg;
  }
  STOKER_RETURN_IF_ERROR(CheckRecorded(*seg.plan, recorded, flags));
  if (resume) {
    STOKER_ASSIGN_OR_RETURN(seg.start, seg.plan->Restore(*resume));
  }
  return seg;
}

Result<uint64_t> Unsigned(const Json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || !j[key].is_number_unsigned()) {
    return InvalidArgument(where + ": '" + key + "' must be an integer >= 0");
  }
  return j[key].get<uint64_t>();
}

// A segment's datasets and options as the plan flags that build them; *names: the datasets'
// names in the record.
Result<PlanFlags> SegmentFlags(const Json& seg, const std::string& where,
                               std::vector<std::string>* names) {
  PlanFlags f;
  const Json& o = seg.value("options", Json::object());
  STOKER_RETURN_IF_ERROR(ReadRecordedOptions(o, where, &f));
  f.run_rows = o.value("run_rows", uint64_t{0});
  f.mixture_names = o.value("dataset_names", std::vector<std::string>{});
  const Json& ds = seg.value("datasets", Json::array());
  if (!ds.is_array() || ds.empty()) return InvalidArgument(where + ": no 'datasets'");
  for (const Json& d : ds) {
    if (!d.is_object() || !d.contains("path") || !d["path"].is_string()) {
      return InvalidArgument(where + ": each dataset needs a 'path'");
    }
    char weight[32];
    std::snprintf(weight, sizeof weight, "%.17g:", d.value("weight", 1.0));
    f.datasets.push_back(weight + d["path"].get<std::string>());
    names->push_back(d.value("name", d["path"].get<std::string>()));
  }
  for (const Json& p : seg.value("phases", Json::array())) {
    MixturePhase phase;
    phase.end_row = p.value("end_row", UINT64_MAX);
    phase.weights = p.value("weights", std::vector<double>{});
    phase.end_weights = p.value("end_weights", std::vector<double>{});
    f.phases.push_back(std::move(phase));
  }
  return f;
}

void NameDatasets(OpenedRun* run) {
  for (RunSegment& seg : run->segments) {
    for (const std::string& name : seg.names) {
      size_t k = 0;
      while (k < run->names.size() && run->names[k] != name) ++k;
      if (k == run->names.size()) run->names.push_back(name);
      seg.dataset_name_index.push_back(k);
    }
  }
}

}  // namespace

Status ReadRecordedOptions(const Json& o, const std::string& where, PlanFlags* f) {
  if (!o.is_object()) return InvalidArgument(where + ": 'options' must be an object");
  for (const char* key : {"seq_len", "batch_size", "world_size", "seed"}) {
    STOKER_RETURN_IF_ERROR(Unsigned(o, key, where).status());
  }
  // Every option of the plan's table the record holds (a record from before a row leaves it at
  // its default), and --long-documents: each read by its row, as its flag is.
  OptionTable<LoaderOptions> rows = RebaseOptions<LoaderOptions>(PlanOptionTable());
  rows.push_back(*FindOption(LoaderOptionTable(), "long_documents"));
  STOKER_RETURN_IF_ERROR(SetRecordedRows(rows, o, where, &f->options));
  f->world_size = f->options.world_size;
  f->rank = 0;
  return Status::OK();
}

Result<OpenedRun> OpenRunRecord(const std::string& path) {
  std::ifstream in(path);
  if (!in) return IOError(path + ": cannot read the run record");
  std::stringstream text;
  text << in.rdbuf();
  Json j = Json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgument(path + ": not a JSON object (a run record or a loader state)");
  }
  // A trainer adapter's file (stoker.integrations: {"states": [loader state, ...], ...}): the
  // record is the same in every rank's state.
  if (j.contains("states") && j["states"].is_array() && !j["states"].empty() &&
      j["states"][0].is_object()) {
    j = Json(j["states"][0]);
  }
  if (j.value("format", "") == "stoker-loader-state") {
    if (!j.contains("run_record")) {
      return InvalidArgument(path +
                             ": this loader state has no \"run_record\" (save it with "
                             "state_dict(run_record=True), or give the datasets and plan flags "
                             "instead of --run)");
    }
    j = j["run_record"];
  }
  if (!j.is_object() || j.value("format", "") != "stoker-run-record") {
    return InvalidArgument(path + ": not a stoker run record (format \"stoker-run-record\")");
  }
  if (j.value("version", 0) != 1) {
    return FailedPrecondition(path + ": run record version " + j.value("version", Json()).dump() +
                              " is not supported (this stoker reads version 1)");
  }
  OpenedRun run;
  run.recorded_steps = j.value("step", uint64_t{0});
  if (IsStreamRecord(j)) {  // a stoker.Stream's: replayed, not planned (stream_run_record.h)
    STOKER_ASSIGN_OR_RETURN(StreamRun stream, ReadStreamRunRecord(j, path));
    run.stream = std::make_shared<const StreamRun>(std::move(stream));
    return run;
  }
  const Json& segments = j.value("segments", Json::array());
  if (!segments.is_array() || segments.empty()) return InvalidArgument(path + ": no segments");
  for (size_t k = 0; k < segments.size(); ++k) {
    const Json& s = segments[k];
    const std::string where = path + ": segment " + std::to_string(k);
    if (!s.is_object()) return InvalidArgument(where + ": not an object");
    std::vector<std::string> names;
    STOKER_ASSIGN_OR_RETURN(PlanFlags flags, SegmentFlags(s, where, &names));
    STOKER_ASSIGN_OR_RETURN(const uint64_t first, Unsigned(s, "step", where));
    std::optional<PlanState> resume;
    if (s.contains("resume") && s["resume"].is_object()) {
      Result<PlanState> st = PlanState::FromJson(s["resume"].dump());
      if (!st.ok()) return st.status().WithContext(where + ": resume");
      resume = std::move(*st);
    }
    Result<RunSegment> seg = OpenSegment(flags, resume, first, names, s.value("fingerprint", ""));
    if (!seg.ok()) return seg.status().WithContext(where);
    if (!run.segments.empty()) {
      if (first < run.segments.back().first_step) {
        return InvalidArgument(where + ": its step " + std::to_string(first) +
                               " is before the previous segment's");
      }
      run.segments.back().end_step = first;
    }
    run.segments.push_back(std::move(*seg));
  }
  NameDatasets(&run);
  return run;
}

Result<OpenedRun> OpenRunFromFlags(const PlanFlags& flags) {
  OpenedRun run;
  STOKER_ASSIGN_OR_RETURN(RunSegment seg, OpenSegment(flags, std::nullopt, 0));
  run.segments.push_back(std::move(seg));
  NameDatasets(&run);
  return run;
}

Result<OpenedRun> OpenRunOrFlags(const CLI::App& sub, const std::string& run, PlanFlags* flags) {
  if (!run.empty()) {
    if (!flags->datasets.empty() || !flags->mixture.empty()) {
      return InvalidArgument("give --run or the datasets (and plan flags), not both");
    }
    return OpenRunRecord(run);
  }
  if (sub.count("--seq-len") == 0 || sub.count("--batch-size") == 0) {
    return InvalidArgument(
        "without --run, give the plan: DATASETs (or --mixture), --seq-len and --batch-size, as "
        "for `stoker explain`");
  }
  STOKER_RETURN_IF_ERROR(ExpandMixtureFlag(flags));
  return OpenRunFromFlags(*flags);
}

const RunSegment& SegmentOfStep(const OpenedRun& run, uint64_t step) {
  for (const RunSegment& seg : run.segments) {
    if (step < seg.end_step) return seg;
  }
  return run.segments.back();
}

Status WalkRun(const OpenedRun& run, uint64_t first, uint64_t last, const RunVisitor& visit,
               const std::function<void(uint64_t)>& progress) {
  uint64_t done = 0;
  for (size_t k = 0; k < run.segments.size() && first <= last; ++k) {
    const RunSegment& seg = run.segments[k];
    if (first >= seg.end_step) continue;
    const uint64_t end = std::min(seg.end_step - 1, last);
    PlanPosition pos = AdvanceSteps(*seg.plan, seg.start, first - seg.first_step);
    // In chunks, so that progress is told as the walk goes.
    while (first <= end) {
      const uint64_t n = std::min<uint64_t>(end - first + 1, 64);
      STOKER_ASSIGN_OR_RETURN(
          pos, WalkPlanSteps(
                   *seg.plan, pos, first, n, [&](const WalkedPiece& w) { return visit(seg, w); },
                   seg.skips.get()));
      first += n;
      done += n;
      if (progress) progress(done);
    }
  }
  return Status::OK();
}

Result<std::pair<uint64_t, uint64_t>> ParseStepRange(const std::string& text) {
  auto number = [&](const std::string& s) -> Result<uint64_t> {
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 19) {
      return InvalidArgument("--steps '" + text + "': expected A..B (both included) or K");
    }
    return std::stoull(s);
  };
  const size_t dots = text.find("..");
  if (dots == std::string::npos) {
    STOKER_ASSIGN_OR_RETURN(uint64_t k, number(text));
    return std::make_pair(k, k);
  }
  STOKER_ASSIGN_OR_RETURN(uint64_t a, number(text.substr(0, dots)));
  STOKER_ASSIGN_OR_RETURN(uint64_t b, number(text.substr(dots + 2)));
  if (b < a) return InvalidArgument("--steps '" + text + "': B is before A");
  return std::make_pair(a, b);
}

}  // namespace stoker::cli
