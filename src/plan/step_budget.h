// StepBudget: tokens per step that change over a run (a batch-size schedule, as OLMo-core's
// batch-size scheduler and Megatron's --rampup-batch-size): phases over the run's position in the
// order that steps counted in tokens cut (a mixture's global rows: token_steps_mixture.h), each
// constant or a linear ramp. A step's budget is the schedule's value at its window's first
// position, so a step stays a pure function of (epoch, first position) and a resume across a
// change is exact. Plain value: thread-safe to read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stoker/status.h"

namespace stoker::plan {

struct StepBudgetPhase {
  uint64_t end = UINT64_MAX;  // the phase holds positions [previous end, end); the last: none
  uint64_t tokens = 0;        // tokens per step at the phase's start (> 0)
  uint64_t end_tokens = 0;    // 0: constant; else ramps linearly to this at `end` (finite)
  bool operator==(const StepBudgetPhase&) const = default;
};

class StepBudget {
 public:
  StepBudget() = default;  // no schedule: the options' tokens_per_step everywhere
  // kInvalidArgument, naming the phase, for ends not increasing, a budget of 0, a ramp without
  // an end, or a last phase with an end.
  static Result<StepBudget> Create(std::vector<StepBudgetPhase> phases);

  // The form Text() writes ("" = no schedule); kInvalidArgument, quoting it, for anything else.
  static Result<StepBudget> Parse(const std::string& text);

  bool empty() const { return phases_.empty(); }
  // The budget of a step whose window starts at global position `position`.
  uint64_t TokensAt(uint64_t position) const;
  // "8192@1000,8192..32768@5000,32768": what a checkpoint's options text keeps, so that a resume
  // under another schedule is refused naming it.
  std::string Text() const;
  const std::vector<StepBudgetPhase>& phases() const { return phases_; }

 private:
  std::vector<StepBudgetPhase> phases_;
};

}  // namespace stoker::plan
