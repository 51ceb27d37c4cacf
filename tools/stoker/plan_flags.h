// The plan's flags on the command line, the one definition of PlanOptions there, shared by every
// command that plans (plan, explain, and through loader_flags.h bench, doctor): the datasets
// ([WEIGHT:]PATH), --seq-len --batch-size --world-size --rank --seed --shuffle --block-shards
// --pack --bestfit-window --remainder, and what they build (the datasets' lengths, PlanOptions).
// Not thread-safe: one command at a time.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "loader/planned_dataset.h"
#include "stoker/plan.h"
#include "stoker/status.h"
#include "stoker/token_source.h"

namespace stoker::cli {

// Defaults are PlanOptions' own.
struct PlanFlags {
  std::vector<std::string> datasets;
  uint64_t seq_len = PlanOptions{}.seq_len;
  uint64_t batch_size = PlanOptions{}.batch_size;
  std::optional<uint32_t> world_size;
  std::optional<uint32_t> rank;
  uint64_t seed = PlanOptions{}.seed;
  std::string shuffle{ShuffleModeName(PlanOptions{}.shuffle)};
  std::string pack{PackModeName(PlanOptions{}.pack)};
  std::string remainder{RemainderPolicyName(PlanOptions{}.remainder)};
  uint64_t block_shards = PlanOptions{}.block_shards;
  uint64_t bestfit_window = PlanOptions{}.bestfit_window;
  uint64_t pad_each_document_to = PlanOptions{}.pad_each_document_to;
  uint64_t max_documents_per_row = PlanOptions{}.max_documents_per_row;
  // Documents longer than --seq-len (LoaderOptions::long_documents): auto | split | drop |
  // truncate.
  std::string long_documents{LongDocumentsName(LongDocuments::kAuto)};
  // --mixture FILE (docs/plan.md, "Schedules") instead of DATASET arguments, with the run's length
  // for shares of it; ExpandMixtureFlag turns them into `datasets` and `phases`.
  std::string mixture;
  std::string total_tokens;
  std::optional<uint64_t> total_steps;
  std::vector<std::string> mixture_names;  // the file's dataset names (after ExpandMixtureFlag)
  std::vector<MixturePhase> phases;        // resolved (after ExpandMixtureFlag)
  uint64_t run_rows = 0;                   // the run's length in global rows (after it), or 0
  // --- BEGIN steps counted in tokens (wip/balance, issue 45): bound by hand until the plan's
  // flags come from the option table (wip/options); drop at that merge. ---
  std::string tokens_per_step = "0";
  uint64_t microbatches = PlanOptions{}.microbatches;
  uint64_t max_tokens_per_microbatch = PlanOptions{}.max_tokens_per_microbatch;
  std::string balance{BalanceModeName(PlanOptions{}.balance)};
  std::string model;
  // --- END steps counted in tokens ---
};

enum class PlanFlagsUse {
  kPlan,    // plan, explain: the datasets, --seq-len and --batch-size are required
  kLoader,  // bench, doctor: the loader's defaults for them (set in *flags before the call)
};

// Registers the flags above on `sub`. With kPlan the DATASET arguments (or --mixture) are required
// by ExpandMixtureFlag.
void AddPlanFlags(CLI::App* sub, PlanFlags* flags, PlanFlagsUse use = PlanFlagsUse::kPlan);

// "[WEIGHT:]PATH" -> weight and path. A prefix that is not a positive number is part of the path.
// The lengths are those the loader plans with `flags`' --long-documents and --seq-len (chat data
// drops its long conversations by default), with the opened source, the source read with its loss
// mask, and what the policy changed.
Result<PlannedDataset> OpenPlanDataset(const std::string& arg, const PlanFlags& flags);

// With --mixture: reads the file, resolves its phases for --seq-len, the global batch and
// --total-tokens / --total-steps, and fills flags->datasets ("WEIGHT:PATH"), mixture_names and
// phases. Refuses DATASET arguments beside --mixture, and --total-* without it. Call once, before
// the flags are used.
Status ExpandMixtureFlag(PlanFlags* flags, PlanFlagsUse use = PlanFlagsUse::kPlan);

// The PlanOptions the flags describe (rank and world size default to $RANK / $WORLD_SIZE).
Result<PlanOptions> BuildPlanOptions(const PlanFlags& flags);

}  // namespace stoker::cli
