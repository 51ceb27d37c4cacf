// The edits of a resumed state (state_edit.h) as a reader of the plan honours them: skip ranges
// of global rows jumped over, and mixture datasets left out. stoker.Loader (Python) and
// `stoker plan --state` follow the same rules (docs/plan.md, "Skipping steps on resume").
// Pure functions: thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/plan.h"
#include "stoker/status.h"

namespace stoker {

// One skip: global rows [from, to) of `epoch`; `steps` names them as the writer counted them.
struct SkipRange {
  uint64_t epoch = 0;
  uint64_t from = 0;
  uint64_t to = 0;
  std::string steps;
};

struct StateEdits {
  std::vector<SkipRange> skips;    // sorted by (epoch, from)
  std::vector<std::string> drops;  // dataset names, as the state names them
};

// The "skip" and "drop" lists of a plan state or a Loader state (one inside "plan_state"); both
// empty for a state without edits. kInvalidArgument: malformed JSON or lists.
Result<StateEdits> ReadStateEdits(std::string_view state_json);

// `plan_state_json` (a plan state) with the skips that end after `pos` and every drop of `edits`
// added, so that a resume from it keeps them.
std::string WithStateEdits(std::string_view plan_state_json, const StateEdits& edits,
                           const PlanPosition& pos);

// Where the step that would start at `pos` starts once `*skips` are honoured, with `plan`'s rows
// per step: a step that would serve a skipped row starts at the skip's end instead (the next
// epoch's first row when the skip runs to its epoch's end). Skips passed are removed from the
// front of `*skips`. A step that starts before a skip and reaches into it (another world size) is
// skipped whole: *warning then says so, naming the rows (else it is left empty).
PlanPosition SkipOver(const Plan& plan, PlanPosition pos, std::vector<SkipRange>* skips,
                      std::string* warning);

// Steps `plan` takes from `pos` to the end of pos.epoch once `skips` are honoured (SkipOver):
// Plan::steps_remaining less the skipped ones.
uint64_t StepsRemainingWithSkips(const Plan& plan, const PlanPosition& pos,
                                 const std::vector<SkipRange>& skips);

// Leaves the datasets named `drops` out of a mixture about to be planned: `names[k]` names
// `(*datasets)[k]`; their weights leave every phase of options->phases (and their names
// options->dataset_names when it has them). kInvalidArgument: a name not in `names` (the message
// lists them), fewer than two datasets left, a phase left with no weight.
Status DropDatasets(const std::vector<std::string>& drops, const std::vector<std::string>& names,
                    std::vector<PlanDataset>* datasets, PlanOptions* options);

}  // namespace stoker
