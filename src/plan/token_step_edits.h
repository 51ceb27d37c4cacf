// Steps counted in tokens (token_step_planner.h) with the edits of a resumed state
// (state_edit.h, docs/plan.md "Skipping steps on resume"): a skip of steps names whole token
// steps by their index in the epoch (the same windows at every world size, so the skip holds on
// any), documents quarantined are left out of every microbatch. Pure functions: thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "plan/state_skips.h"
#include "plan/token_step_planner.h"
#include "stoker/plan.h"
#include "stoker/status.h"

namespace stoker {

// The "unit" of a skip range over token steps: its from/to are step indices, not global rows.
inline constexpr std::string_view kTokenStepsUnit = "token_steps";

// Whether `state` is one of steps counted in tokens (its stream is "token_steps step=N...").
bool IsTokenStepsState(const PlanState& state);

// SkipStepsInState for a state of steps counted in tokens: {"epoch", "from": first, "to":
// last + 1, "steps", "unit": "token_steps"} appended to its "skip" list. kInvalidArgument: a step
// the state has already passed or begun.
Result<std::string> SkipTokenStepsInState(std::string_view state_json, const PlanState& state,
                                          uint64_t first, uint64_t last);

// The microbatches `planner` serves this rank from `pos` to its epoch's end, less those of the
// steps `skips` (ranges of step indices) leave out.
Result<uint64_t> TokenBatchesRemaining(const TokenStepPlanner& planner, const PlanPosition& pos,
                                       const std::vector<SkipRange>& skips);

}  // namespace stoker
