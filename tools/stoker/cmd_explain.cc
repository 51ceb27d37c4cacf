// `stoker explain`: which documents fill each row of one step of one rank (provenance: dataset,
// shard, record within the shard, token range), for the indexed plan or, with --stream, the
// streaming path (docs/provenance.md).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "number_flags.h"
#include "plan/plan_batch_planner.h"
#include "plan_flags.h"
#include "stoker/stream.h"
#include "stream_flags.h"

namespace stoker::cli {
namespace {

struct ExplainArgs {
  PlanFlags plan;
  uint64_t step = 0;
  uint64_t epoch = 0;
  bool json = false;
  StreamFlags stream;  // --stream: the DATASET arguments are raw text read by the streaming path
};

Result<StepProvenance> ExplainIndexed(const ExplainArgs& a, const PlanOptions& o) {
  std::vector<PlanDataset> datasets;
  std::vector<std::shared_ptr<const TokenSource>> sources;
  for (const std::string& arg : a.plan.datasets) {
    STOKER_ASSIGN_OR_RETURN(PlannedDataset ds, OpenPlanDataset(arg, a.plan));
    datasets.push_back(std::move(ds.plan));
    sources.push_back(std::move(ds.source));
  }
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<Plan> plan,
                          Plan::Create(std::move(datasets), o, SharedWindowCounter()));
  const PlanPosition pos{a.epoch, a.step * plan->global_batch_rows()};
  if (!plan->HasStep(pos)) {
    return OutOfRange("step " + std::to_string(a.step) + " is past the end of epoch " +
                      std::to_string(a.epoch) + " (" +
                      std::to_string(plan->steps_per_epoch(a.epoch)) + " steps)");
  }
  return PlanBatchPlanner(std::move(plan), o.rank, std::move(sources)).Explain(pos);
}

Result<StepProvenance> ExplainStream(const ExplainArgs& a, const PlanOptions& o) {
  STOKER_ASSIGN_OR_RETURN(StreamOptions so, ToStreamOptions(a.stream, a.plan.datasets));
  LoaderOptions lo;
  static_cast<PlanOptions&>(lo) = o;  // the plan flags, as bench --stream takes them
  STOKER_ASSIGN_OR_RETURN(lo.on_error, ParseErrorPolicy(a.stream.on_error));
  STOKER_ASSIGN_OR_RETURN(std::shared_ptr<const BatchPlanner> planner, OpenStreamPlanner(so, lo));
  STOKER_ASSIGN_OR_RETURN(const uint64_t steps, planner->StepsPerEpoch(a.epoch));
  if (a.step >= steps) {
    return OutOfRange("step " + std::to_string(a.step) + " is past the end of epoch " +
                      std::to_string(a.epoch) + " (" + std::to_string(steps) + " steps)");
  }
  return planner->Explain({a.epoch, a.step * o.batch_size * o.world_size});
}

void Print(const StepProvenance& p) {
  std::printf("epoch %llu step %llu rank %u: %zu rows\n",
              static_cast<unsigned long long>(p.position.epoch),
              static_cast<unsigned long long>(p.step), p.rank, p.rows.size());
  for (size_t r = 0; r < p.rows.size(); ++r) {
    // A mixture's row: the epoch of its dataset's own order and, with a schedule, its phase
    // (the same for every piece of the row).
    std::string mixture;
    if (!p.rows[r].pieces.empty()) {
      const PieceProvenance& first = p.rows[r].pieces[0];
      if (first.dataset_epoch) mixture += ", dataset_epoch " + std::to_string(*first.dataset_epoch);
      if (first.phase) mixture += ", phase " + std::to_string(*first.phase);
    }
    if (!mixture.empty()) mixture = " (" + mixture.substr(2) + ")";
    std::printf("  row %zu%s%s:\n", r, mixture.c_str(),
                p.rows[r].repeated ? " (repeated from the next epoch)" : "");
    for (const PieceProvenance& x : p.rows[r].pieces) {
      std::string where =
          x.byte_offset
              ? "record " + std::to_string(x.record) + " at byte " + std::to_string(*x.byte_offset)
              : "record " + std::to_string(x.record) + ", document " + std::to_string(x.document);
      std::printf("    [%llu, %llu) %s: shard %llu %s, %s, tokens [%llu, %llu)%s\n",
                  static_cast<unsigned long long>(x.row_offset),
                  static_cast<unsigned long long>(x.row_offset + x.length), x.source.c_str(),
                  static_cast<unsigned long long>(x.shard), x.shard_path.c_str(), where.c_str(),
                  static_cast<unsigned long long>(x.offset),
                  static_cast<unsigned long long>(x.offset + x.length),
                  x.key ? (" key " + *x.key).c_str() : "");
    }
  }
}

int RunExplain(const ExplainArgs& a) {
  if (Status st = CheckStreamFlagsUse(a.stream); !st.ok()) return ReportError("explain", st);
  Result<PlanOptions> o = BuildPlanOptions(a.plan);
  if (!o.ok()) return ReportError("explain", o.status());
  Result<StepProvenance> p = a.stream.stream ? ExplainStream(a, *o) : ExplainIndexed(a, *o);
  if (!p.ok()) return ReportError("explain", p.status());
  if (a.json) {
    std::printf("%s\n", p->ToJson().c_str());
  } else {
    Print(*p);
  }
  return kExitOk;
}

}  // namespace

void AddExplainCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ExplainArgs>();
  auto* sub = app.add_subcommand(
      "explain", "Which documents fill each row of one step of one rank (provenance)");
  sub->footer(
      "Takes the same plan flags as `stoker plan` and prints, for each row of the step, its\n"
      "pieces: where in the row, the dataset, the shard, the record within the shard (and its\n"
      "document index in the dataset), and the token range taken from the document.\n"
      "--stream: the DATASET arguments are raw text read by the streaming path (as for\n"
      "`stoker bench --stream`); pieces then name the input file, the record and its byte offset.\n"
      "Example: stoker explain web --seq-len 2048 --batch-size 8 --world-size 64 --rank 3 "
      "--step 81234");
  AddPlanFlags(sub, &args->plan);
  sub->add_option("--step", args->step, "The step to explain (counted from the epoch's start)")
      ->required()
      ->check(WholeNumber<uint64_t>());
  sub->add_option("--epoch", args->epoch, "Its epoch")
      ->check(WholeNumber<uint64_t>())
      ->capture_default_str();
  sub->add_flag("--json", args->json, "One JSON object");
  AddStreamFlags(sub, &args->stream);
  sub->callback([args, exit_code] {
    Status st = args->stream.stream && !args->plan.mixture.empty()
                    ? InvalidArgument("--mixture plans indexed datasets, not --stream")
                    : ExpandMixtureFlag(&args->plan);
    *exit_code = st.ok() ? RunExplain(*args) : ReportError("explain", st);
  });
}

}  // namespace stoker::cli
