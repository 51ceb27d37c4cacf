#include "plan_flags.h"

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "cli_common.h"
#include "format/stoker_dataset.h"
#include "loader/loader_options_table.h"
#include "loader/mixture_spec.h"
#include "loader/model_cost.h"
#include "loader/planned_dataset.h"
#include "number_flags.h"
#include "option_flags.h"
#include "plan/plan_options_table.h"
#include "plan/token_steps_mixture.h"

namespace stoker::cli {

void AddPlanFlags(CLI::App* sub, PlanFlags* f, PlanFlagsUse use) {
  const bool required = use == PlanFlagsUse::kPlan;
  sub->add_option("datasets", f->datasets,
                  "[WEIGHT:]DATASET (any format `stoker inspect` reads)" +
                      std::string(required ? "; or --mixture" : ""));
  sub->add_option("--mixture", f->mixture,
                  "A mixture file instead of DATASETs: named datasets and their weights, in "
                  "phases over the run (docs/plan.md, \"Schedules\")")
      ->check(CLI::ExistingFile);
  sub->add_option("--total-tokens", f->total_tokens,
                  "The run's length in tokens, for phases that end at a share of it (e.g. 2T)");
  sub->add_option("--total-steps", f->total_steps,
                  "The run's length in steps, for phases that end at a share of it")
      ->check(WholeNumber<uint64_t>(1));
  // Every row of the plan's option table with a CLI spelling, as the loader's own rows are
  // (option_flags.h): its help text, default and validation are the row's.
  for (const OptionRow<PlanOptions>& row : PlanOptionTable()) {
    CLI::Option* opt = AddOptionFlag<PlanOptions>(sub, row, &f->options);
    if (opt == nullptr) continue;
    if ((row.name == "seq_len" || row.name == "batch_size") && required) {
      opt->required()->default_str("");
    } else if (row.name == "world_size" || row.name == "rank") {
      // No default of its own: $WORLD_SIZE / $RANK unless given (BuildPlanOptions).
      std::optional<uint32_t>* given = row.name == "rank" ? &f->rank : &f->world_size;
      opt->default_str("")->each([given](const std::string& text) {
        *given = static_cast<uint32_t>(std::strtoull(text.c_str(), nullptr, 10));
      });
    }
  }
  AddOptionFlag<LoaderOptions>(sub, *FindOption(LoaderOptionTable(), "long_documents"),
                               &f->options);
}

Result<PlannedDataset> OpenPlanDataset(const std::string& arg, const PlanFlags& flags) {
  double weight = 1.0;
  std::string path = arg;
  size_t colon = arg.find(':');
  if (colon != std::string::npos && colon > 0) {
    std::string prefix = arg.substr(0, colon);
    char* end = nullptr;
    double w = std::strtod(prefix.c_str(), &end);
    if (end == prefix.c_str() + prefix.size()) {
      if (!(w > 0)) return InvalidArgument("weight '" + prefix + "' of '" + arg + "' must be > 0");
      weight = w;
      path = arg.substr(colon + 1);
    }
  }
  const LoaderOptions& o = flags.options;
  return OpenPlannedDataset(path, weight, o.seq_len, o.pack, o.long_documents);
}

Status ExpandMixtureFlag(PlanFlags* f, PlanFlagsUse use) {
  if (f->mixture.empty()) {
    if (!f->total_tokens.empty() || f->total_steps) {
      return InvalidArgument("--total-tokens and --total-steps go with --mixture");
    }
    if (use == PlanFlagsUse::kPlan && f->datasets.empty()) {
      return InvalidArgument("give at least one DATASET, or --mixture FILE");
    }
    return Status::OK();
  }
  if (!f->datasets.empty()) {
    return InvalidArgument("give DATASET arguments or --mixture, not both (" + f->datasets[0] +
                           ")");
  }
  if (!f->total_tokens.empty() && f->total_steps) {
    return InvalidArgument("give --total-tokens or --total-steps, not both");
  }
  plan::RunLength run;
  if (!f->total_tokens.empty()) {
    Result<uint64_t> tokens = plan::ParseCount(f->total_tokens);
    if (!tokens.ok()) return tokens.status().WithContext("--total-tokens");
    run.total_tokens = *tokens;
  }
  run.total_steps = f->total_steps;
  STOKER_ASSIGN_OR_RETURN(RankAndWorldSize rw, ResolveRankAndWorldSize(f->rank, f->world_size));
  // Steps counted in tokens: phases count rows of the microbatch budget, ⌈tokens_per_step /
  // budget⌉ of them per step (plan/token_steps_mixture.h).
  const bool token_steps = f->options.tokens_per_step > 0;
  const PlanOptions rows = token_steps ? MixtureRowOptions(f->options) : f->options;
  STOKER_ASSIGN_OR_RETURN(
      MixtureSpec spec,
      ReadMixtureSpec(f->mixture, rows.seq_len,
                      token_steps ? rows.batch_size : f->options.batch_size * rw.world_size, run));
  f->options.tokens_per_step_schedule = spec.tokens_per_step_schedule;
  for (size_t k = 0; k < spec.paths.size(); ++k) {
    char weight[32];
    std::snprintf(weight, sizeof weight, "%.17g:", spec.weights[k]);
    f->datasets.push_back(weight + spec.paths[k]);
  }
  f->mixture_names = spec.names;
  f->phases = spec.phases;
  f->run_rows = spec.run_rows;
  return Status::OK();
}

Result<PlanOptions> BuildPlanOptions(const PlanFlags& a) {
  PlanOptions o = a.options;
  STOKER_ASSIGN_OR_RETURN(RankAndWorldSize rw, ResolveRankAndWorldSize(a.rank, a.world_size));
  o.rank = rw.rank;
  o.world_size = rw.world_size;
  o.phases = a.phases;
  o.run_rows = a.run_rows;
  o.dataset_names = a.mixture_names;  // a mixture's checkpoint matches its datasets by them
  return WithModelCost(o);            // steps counted in tokens: the cost of --model-config
}

}  // namespace stoker::cli
