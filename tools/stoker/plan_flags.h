// The plan's flags on the command line, the one definition of PlanOptions there, shared by every
// command that plans (plan, explain, and through loader_flags.h bench, doctor): the datasets
// ([WEIGHT:]PATH), every row of PlanOptionTable() with a CLI spelling (--seq-len --batch-size
// --world-size --rank --seed --shuffle ...; help text and default from the row), --long-documents,
// and what they build (the datasets' lengths, PlanOptions).
// Not thread-safe: one command at a time.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "loader/planned_dataset.h"
#include "stoker/loader.h"
#include "stoker/plan.h"
#include "stoker/status.h"
#include "stoker/token_source.h"

namespace stoker::cli {

// Defaults are PlanOptions' own.
struct PlanFlags {
  PlanFlags() { options.batch_size = PlanOptions{}.batch_size; }
  std::vector<std::string> datasets;
  // Every row of PlanOptionTable() with a CLI spelling writes its field here (a row added to the
  // table is a flag with no other edit), and --long-documents its own (a LoaderOptions row: the
  // plan counts documents as the loader reads them). LoaderFlags' rows write here too.
  LoaderOptions options;
  // --world-size / --rank as given; unset ones are $WORLD_SIZE / $RANK, else 1 / 0.
  std::optional<uint32_t> world_size;
  std::optional<uint32_t> rank;
  // --mixture FILE (docs/plan.md, "Schedules") instead of DATASET arguments, with the run's length
  // for shares of it; ExpandMixtureFlag turns them into `datasets` and `phases`.
  std::string mixture;
  std::string total_tokens;
  std::optional<uint64_t> total_steps;
  std::vector<std::string> mixture_names;  // the file's dataset names (after ExpandMixtureFlag)
  std::vector<MixturePhase> phases;        // resolved (after ExpandMixtureFlag)
  uint64_t run_rows = 0;                   // the run's length in global rows (after it), or 0
  // The file's batch-size schedule goes into options.tokens_per_step_schedule (after it).
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
