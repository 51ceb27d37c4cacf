// Internal entry points of the loader, for tests and tools: open a loader over a hand-made
// BatchPlanner (rows planned by hand, fault-injecting sources) instead of a stoker::Plan.
#pragma once

#include <memory>
#include <vector>

#include "loader/batch_planner.h"
#include "stoker/loader.h"

namespace stoker::loader {

// Like Loader::Open, with `planner` in place of the plan (Loader::plan() is then null and
// Restore accepts any state of this planner). Rows come from `sources[piece.dataset]`.
Result<std::unique_ptr<Loader>> OpenLoaderWithPlanner(
    std::shared_ptr<const BatchPlanner> planner,
    std::vector<std::shared_ptr<const TokenSource>> sources, const LoaderOptions& options,
    const PlanPosition& start);

// Checks the options Loader::Open and OpenLoaderWithPlanner share.
Status ValidateOptions(const LoaderOptions& options);
// Gives the loader (opened with a PlanBatchPlanner over `plan`) shared ownership of the plan.
// Sets the plan; with remote datasets behind a cache, schedules the shards of the first steps
// from `start` (and Next keeps the look-ahead going).
void SetLoaderPlan(Loader::Impl* impl, std::shared_ptr<const Plan> plan, const PlanPosition& start);
inline constexpr uint64_t kRescheduleSteps = 16;

}  // namespace stoker::loader
