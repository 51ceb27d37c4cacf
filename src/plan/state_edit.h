// State edits on resume (docs/plan.md, "Skipping steps on resume"): SkipStepsInState marks a range
// of steps of a checkpoint's epoch as skipped; stoker.Loader, restoring the state, serves every
// step before the range, jumps over it, and continues after it. Pure functions: thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/status.h"

namespace stoker {

// `state_json`: a plan state, or a Loader state (a plan state inside "plan_state"). Returns the
// same JSON with {"epoch", "from", "to", "steps", "world_size", "batch_size"} appended to the plan
// state's "skip" list: steps first..last (both included) of the state's epoch, in the writer's
// steps (batch_size * world_size global rows each), as global rows [from, to) of that epoch.
// kInvalidArgument: malformed JSON, last < first, a step the state has already passed, a stream's
// state (its order is not a function of the step), a state without its world and batch size.
Result<std::string> SkipStepsInState(std::string_view state_json, uint64_t first, uint64_t last);

// Returns `state_json` with `name` appended to its plan state's "drop" list: a dataset of the
// mixture that a Loader restoring the state leaves out from there on (quarantined: the rest of
// the others' epochs served exactly once, as when a mixture file drops it; docs/plan.md).
// kInvalidArgument: no dataset of that name in the state (it lists them), the state of a run of
// one dataset, fewer than two datasets left (a continued mixture needs two).
Result<std::string> DropSourceInState(std::string_view state_json, const std::string& name);

// Returns `state_json` with `ids` (DATASET:SHARD:RECORD, as `stoker trace` prints them) added to
// its plan state's "skip_documents" list: documents quarantined from the state on. A loader
// opened at the state resolves them against its datasets (refusing an id that names none) and
// leaves their pieces out of every row; every other document is served as planned.
// kInvalidArgument: malformed JSON or id, no id, a stream's state.
Result<std::string> SkipDocumentsInState(std::string_view state_json,
                                         const std::vector<std::string>& ids);

}  // namespace stoker
