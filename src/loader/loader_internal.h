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

}  // namespace stoker::loader
