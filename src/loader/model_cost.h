// The cost of a step counted in tokens from PlanOptions::model (docs/plan.md, "Balanced steps"):
// numbers "a,b" or "a,b,c", or a model directory or its config.json, read here (the plan reads
// no file). Thread-safe (free functions).
#pragma once

#include <string>

#include "stoker/plan.h"
#include "stoker/status.h"

namespace stoker {

// kInvalidArgument naming `model` for text that is neither numbers nor a readable config.json of
// a dense decoder (plan/cost_model.h says which it knows).
Result<StepCost> ResolveModelCost(const std::string& model);

// `options` with step_cost set from options.model when tokens_per_step > 0 and a model is given
// (the resolved options a plan, the loader and `stoker plan` build).
Result<PlanOptions> WithModelCost(PlanOptions options);

}  // namespace stoker
