// Steps counted in tokens over a mixture (docs/plan.md, "Balanced steps"): the mixture's own row
// plan decides which documents come from which dataset, in what order, and in which phase (its
// Schedule, each dataset's endless stream of its own epochs: exactly once per dataset epoch); the
// token-step windows cut that merged order of rows (MixtureStepOrder) as they cut one dataset's
// documents, and TokenSteps deals each window to (rank, microbatch) slots. The row plan's rows
// are max_tokens_per_microbatch tokens (best fit), its global batch ⌈tokens_per_step / that⌉ rows
// (what a phase's `until` in steps counts), one rank. Its checkpoints carry the row plan's
// cursors, so a resume into an edited mixture continues every dataset where it stopped.
// Thread-safe: every method is const (TokenStepPlanner's caches are locked).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "plan/token_step_planner.h"
#include "plan/token_steps.h"
#include "stoker/plan.h"
#include "stoker/window_counter.h"

namespace stoker {

// The merged rows of a mixture's row plan, in the order of its epoch's global rows.
class MixtureStepOrder final : public plan::StepOrder {
 public:
  MixtureStepOrder(std::shared_ptr<const Plan> plan,
                   std::vector<std::shared_ptr<const DatasetLengths>> lengths)
      : plan_(std::move(plan)), lengths_(std::move(lengths)) {}
  Result<uint64_t> Take(uint64_t epoch, uint64_t first, uint64_t until, uint64_t budget,
                        std::vector<RowPiece>* pieces, uint64_t* tokens) const override;
  uint64_t DocumentLength(uint32_t dataset, uint64_t document) const override {
    return lengths_[dataset]->length(document);
  }
  std::string name() const override;
  // The global row (a mixture's epochs have a fixed row count; one dataset's are summed).
  uint64_t RunPosition(uint64_t epoch, uint64_t first) const override;
  const Plan& plan() const { return *plan_; }

 private:
  std::shared_ptr<const Plan> plan_;
  std::vector<std::shared_ptr<const DatasetLengths>> lengths_;
};

// The row plan options of a mixture's token steps: `options` (tokens_per_step > 0) with rows of
// the microbatch budget, best fit, a global batch of ⌈tokens_per_step / budget⌉ rows on one rank.
PlanOptions MixtureRowOptions(const PlanOptions& options);

class MixtureTokenStepPlanner final : public TokenStepPlanner {
 public:
  // `plan`: a row plan made with MixtureRowOptions(options), or one continued after an edit
  // (its rows start at `first`, the continued position). `budget`: a batch-size schedule over
  // global rows (step_budget.h; empty: options.tokens_per_step), in the fingerprint.
  static Result<std::unique_ptr<MixtureTokenStepPlanner>> Create(
      std::shared_ptr<const Plan> plan, std::vector<std::shared_ptr<const DatasetLengths>> lengths,
      const PlanOptions& options, TrainedTargets trained = nullptr, PlanPosition first = {},
      plan::StepBudget budget = {});
  // TokenStepPlanner's state with the row plan's cursors at the step's first row (global_row,
  // datasets, stream_options, origin).
  PlanState MakeState(const PlanPosition& pos) const override;
  const Plan& row_plan() const { return *plan_; }

 private:
  MixtureTokenStepPlanner(std::unique_ptr<plan::TokenSteps> steps, std::shared_ptr<const Plan> plan,
                          TrainedTargets trained, std::string schedule);
  std::shared_ptr<const Plan> plan_;
};

// A mixture's token steps opened, from a checkpoint or not.
struct MixtureTokenSteps {
  std::shared_ptr<MixtureTokenStepPlanner> planner;  // the caller may set provenance and skips
  PlanPosition start;                                // where delivery starts
  std::string summary;  // after an edited mixture: one line per dataset (Plan::Continued)
};

// The token steps of `datasets` (two or more; or one with a batch-size schedule) under `options`
// (tokens_per_step > 0; a non-empty tokens_per_step_schedule, plan::StepBudget's text, sets each
// step's tokens), resumed at `resume` (may be null). A checkpoint of this very plan resumes
// bit-exactly (at any world size, as TokenStepPlanner says); one of an edited mixture (its
// fingerprint differs, it carries cursors) continues every dataset where it stopped
// (Plan::ContinueFrom) from its step's first microbatch. Refused, naming what differs: other token
// options, a checkpoint in the middle of a step into an edited mixture, and whatever ContinueFrom
// refuses (a checkpoint of another schedule: naming tokens_per_step_schedule); kInvalidArgument for
// a schedule that does not parse.
Result<MixtureTokenSteps> OpenMixtureTokenSteps(
    std::vector<PlanDataset> datasets, const PlanOptions& options, const PlanState* resume,
    TokenStepPlanner::TrainedTargets trained = nullptr,
    std::shared_ptr<const WindowCounter> counter = nullptr);

}  // namespace stoker
