// The edits of a resumed state (state_edit.h) as a reader of the plan honours them: skip ranges
// of global rows never served, and mixture datasets left out. PlanBatchPlanner (so the C++ and
// Python Loaders) and `stoker plan --state` follow these rules (docs/plan.md, "Skipping steps on
// resume").
// Pure functions: thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/plan.h"
#include "stoker/status.h"

namespace stoker {

struct StateEdits {
  std::vector<SkipRange> skips;    // sorted by (epoch, from)
  std::vector<std::string> drops;  // dataset names, as the state names them
};

// The "skip" and "drop" lists of a plan state or a Loader state (one inside "plan_state"); both
// empty for a state without edits. kInvalidArgument: malformed JSON or lists.
Result<StateEdits> ReadStateEdits(std::string_view state_json);

// Where a step starts once `skips` (of global rows; token-step ones are ignored) are honoured:
// `pos`, normalized (Plan::Normalize), or, when it lies inside a skip, the skip's end (the next
// epoch's first step when no step is left after it), again until it lies in none. A step that
// starts before a skip and reaches into it (another world size) is not moved: it is served, its
// rows from the skip's first row on empty (EmptySkippedRows), and the next step starts at the
// skip's end (this function, applied to Plan::Advance of it).
PlanPosition SkipOver(const Plan& plan, PlanPosition pos, const std::vector<SkipRange>& skips);

// Empties (no pieces: padding) the rows of `batch`, `plan`'s batch of its rank at
// batch->position, whose global row index lies in one of `skips` (of global rows). Returns how
// many it emptied.
size_t EmptySkippedRows(const Plan& plan, const std::vector<SkipRange>& skips, Batch* batch);

// The skips of `skips` not yet passed at `pos` (ending after it): what a state at `pos` keeps.
std::vector<SkipRange> SkipsAhead(const std::vector<SkipRange>& skips, const PlanPosition& pos);

// Steps `plan` serves from `pos` to the end of pos.epoch once `skips` are honoured (SkipOver,
// EmptySkippedRows): Plan::steps_remaining less the steps that start inside a skip. A step that
// reaches into a skip from before it counts.
uint64_t StepsRemainingWithSkips(const Plan& plan, const PlanPosition& pos,
                                 const std::vector<SkipRange>& skips);

// Leaves the datasets named `drops` out of a mixture about to be planned: `names[k]` names
// `(*datasets)[k]`; their weights leave every phase of options->phases (and their names
// options->dataset_names when it has them). kInvalidArgument: a name not in `names` (the message
// lists them), fewer than two datasets left, a phase left with no weight.
Status DropDatasets(const std::vector<std::string>& drops, const std::vector<std::string>& names,
                    std::vector<PlanDataset>* datasets, PlanOptions* options);

}  // namespace stoker
