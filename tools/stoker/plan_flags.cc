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
#include "plan/plan_options_table.h"

namespace stoker::cli {

// Steps counted in tokens: defined in the block at the end of this file.
void AddTokenStepFlags(CLI::App* sub, PlanFlags* f);
Status ApplyTokenStepFlags(const PlanFlags& a, PlanOptions* o);

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
  // Help texts are the option table's (plan/plan_options_table.h).
  auto doc = [](std::string_view name) {
    return std::string(FindOption(PlanOptionTable(), name)->doc);
  };
  auto* seq_len = sub->add_option("--seq-len", f->seq_len, doc("seq_len"))
                      ->required(required)
                      ->check(WholeNumber<uint64_t>(1));
  auto* batch_size = sub->add_option("--batch-size", f->batch_size, doc("batch_size"))
                         ->required(required)
                         ->check(WholeNumber<uint64_t>(1));
  if (!required) {
    seq_len->capture_default_str();
    batch_size->capture_default_str();
  }
  sub->add_option("--world-size", f->world_size, doc("world_size"))
      ->check(WholeNumber<uint32_t>(1));
  sub->add_option("--rank", f->rank, doc("rank"))->check(WholeNumber<uint32_t>());
  sub->add_option("--seed", f->seed, doc("seed"))
      ->check(WholeNumber<uint64_t>())
      ->capture_default_str();
  sub->add_option("--shuffle", f->shuffle, doc("shuffle"))
      ->check(CLI::IsMember({"global", "block", "none"}))
      ->capture_default_str();
  sub->add_option("--block-shards", f->block_shards, doc("block_shards"))
      ->check(WholeNumber<uint64_t>(1))
      ->capture_default_str();
  sub->add_option("--pack", f->pack, doc("pack"))
      ->check(CLI::IsMember({"concat", "bestfit", "pad"}))
      ->capture_default_str();
  sub->add_option("--bestfit-window", f->bestfit_window, doc("bestfit_window"))
      ->check(WholeNumber<uint64_t>(1))
      ->capture_default_str();
  sub->add_option("--pad-each-document-to", f->pad_each_document_to, doc("pad_each_document_to"))
      ->check(WholeNumber<uint64_t>())
      ->capture_default_str();
  sub->add_option("--max-documents-per-row", f->max_documents_per_row, doc("max_documents_per_row"))
      ->check(WholeNumber<uint64_t>())
      ->capture_default_str();
  sub->add_option("--remainder", f->remainder, doc("remainder"))
      ->check(CLI::IsMember({"drop_last", "pad"}))
      ->capture_default_str();
  sub->add_option("--long-documents", f->long_documents,
                  std::string(FindOption(LoaderOptionTable(), "long_documents")->doc))
      ->check(CLI::IsMember({"auto", "split", "drop", "truncate"}))
      ->capture_default_str();
  AddTokenStepFlags(sub, f);
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
  STOKER_ASSIGN_OR_RETURN(LongDocuments policy, ParseLongDocuments(flags.long_documents));
  STOKER_ASSIGN_OR_RETURN(PackMode pack, ParsePackMode(flags.pack));
  return OpenPlannedDataset(path, weight, flags.seq_len, pack, policy);
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
  STOKER_ASSIGN_OR_RETURN(MixtureSpec spec, ReadMixtureSpec(f->mixture, f->seq_len,
                                                            f->batch_size * rw.world_size, run));
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
  PlanOptions o;
  o.seq_len = a.seq_len;
  o.batch_size = a.batch_size;
  STOKER_ASSIGN_OR_RETURN(RankAndWorldSize rw, ResolveRankAndWorldSize(a.rank, a.world_size));
  o.rank = rw.rank;
  o.world_size = rw.world_size;
  o.seed = a.seed;
  STOKER_ASSIGN_OR_RETURN(o.shuffle, ParseShuffleMode(a.shuffle));
  STOKER_ASSIGN_OR_RETURN(o.pack, ParsePackMode(a.pack));
  STOKER_ASSIGN_OR_RETURN(o.remainder, ParseRemainderPolicy(a.remainder));
  o.block_shards = a.block_shards;
  o.bestfit_window = a.bestfit_window;
  o.pad_each_document_to = a.pad_each_document_to;
  o.max_documents_per_row = a.max_documents_per_row;
  o.phases = a.phases;
  o.run_rows = a.run_rows;
  o.dataset_names = a.mixture_names;  // a mixture's checkpoint matches its datasets by them
  STOKER_RETURN_IF_ERROR(ApplyTokenStepFlags(a, &o));
  return o;
}

// --- BEGIN steps counted in tokens (wip/balance, issue 45): the flags of tokens_per_step,
// microbatches, max_tokens_per_microbatch, balance and model, bound by hand until the plan's flags
// come from the option table (wip/options); drop this block at that merge. ---
void AddTokenStepFlags(CLI::App* sub, PlanFlags* f) {
  auto doc = [](std::string_view name) {
    return std::string(FindOption(PlanOptionTable(), name)->doc);
  };
  sub->add_option("--tokens-per-step", f->tokens_per_step, doc("tokens_per_step"))
      ->capture_default_str();
  sub->add_option("--microbatches", f->microbatches, doc("microbatches"))
      ->check(WholeNumber<uint64_t>(1))
      ->capture_default_str();
  sub->add_option("--max-tokens-per-microbatch", f->max_tokens_per_microbatch,
                  doc("max_tokens_per_microbatch"))
      ->check(WholeNumber<uint64_t>())
      ->capture_default_str();
  sub->add_option("--balance", f->balance, doc("balance"))
      ->check(CLI::IsMember({"tokens", "attention", "none"}))
      ->capture_default_str();
  sub->add_option("--model-config", f->model, doc("model"));
}

Status ApplyTokenStepFlags(const PlanFlags& a, PlanOptions* o) {
  const OptionTable<PlanOptions>& t = PlanOptionTable();
  STOKER_RETURN_IF_ERROR(FindOption(t, "tokens_per_step")->set(*o, a.tokens_per_step));
  o->microbatches = a.microbatches;
  o->max_tokens_per_microbatch = a.max_tokens_per_microbatch;
  STOKER_ASSIGN_OR_RETURN(o->balance, ParseBalanceMode(a.balance));
  o->model = a.model;
  STOKER_ASSIGN_OR_RETURN(*o, WithModelCost(*o));
  return Status::OK();
}
// --- END steps counted in tokens ---

}  // namespace stoker::cli
