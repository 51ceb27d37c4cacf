// `stoker plan --tokens-per-step`: steps counted in tokens (docs/plan.md, "Balanced steps"),
// printed per microbatch of one rank, or their balance statistics (--stats). Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stoker/plan.h"

namespace stoker::cli {

// One dataset or a mixture; `options.tokens_per_step` > 0 and step_cost resolved (with its
// tokens_per_step_schedule, a mixture file's, if any). Returns the exit code.
int RunTokenStepPlan(const PlanOptions& options, const std::vector<PlanDataset>& datasets,
                     uint64_t epoch, std::optional<uint64_t> steps, bool stats, bool json);

}  // namespace stoker::cli
