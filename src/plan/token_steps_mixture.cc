#include "plan/token_steps_mixture.h"

#include <algorithm>
#include <utility>

#include "plan/options_text.h"

namespace stoker {

Result<uint64_t> MixtureStepOrder::Take(uint64_t epoch, uint64_t first, uint64_t until,
                                        uint64_t budget, std::vector<RowPiece>* pieces,
                                        uint64_t* tokens) const {
  const uint64_t rows = plan_->rows_in_epoch(epoch);
  uint64_t p = first;
  std::vector<Row> chunk;
  while (p < rows && *tokens < until) {
    // About the rows still wanted (rows hold at most `budget` tokens), then one row at a time.
    const uint64_t wanted = (until - *tokens + budget - 1) / budget;
    chunk.clear();
    STOKER_RETURN_IF_ERROR(plan_->GetRows(epoch, p, std::min(rows - p, wanted), &chunk));
    for (const Row& row : chunk) {
      if (*tokens >= until) break;
      ++p;
      for (const RowPiece& piece : row.pieces) {
        pieces->push_back(piece);
        *tokens += piece.length;
      }
    }
  }
  return p;
}

uint64_t MixtureStepOrder::RunPosition(uint64_t epoch, uint64_t first) const {
  if (plan_->num_datasets() > 1) return epoch * plan_->rows_in_epoch(epoch) + first;
  uint64_t rows = first;
  for (uint64_t e = 0; e < epoch; ++e) rows += plan_->rows_in_epoch(e);
  return rows;
}

std::string MixtureStepOrder::name() const {
  return "the mixture of " + std::to_string(lengths_.size()) + " datasets";
}

PlanOptions MixtureRowOptions(const PlanOptions& options) {
  PlanOptions o = options;
  o.seq_len =
      options.max_tokens_per_microbatch > 0 ? options.max_tokens_per_microbatch : options.seq_len;
  o.max_tokens_per_microbatch = o.seq_len;
  o.pack = PackMode::kBestFit;
  o.batch_size = o.seq_len > 0
                     ? std::max<uint64_t>(1, (options.tokens_per_step + o.seq_len - 1) / o.seq_len)
                     : 1;
  o.world_size = 1;
  o.rank = 0;
  o.remainder = RemainderPolicy::kDropLast;
  return o;
}

MixtureTokenStepPlanner::MixtureTokenStepPlanner(std::unique_ptr<plan::TokenSteps> steps,
                                                 std::shared_ptr<const Plan> plan,
                                                 TrainedTargets trained, std::string schedule)
    : TokenStepPlanner(
          std::move(steps),
          // A batch-size schedule changes every step after its first change: in the fingerprint.
          [plan, schedule] {
            return schedule.empty() ? plan->fingerprint()
                                    : plan->fingerprint() + "-steps-" + schedule;
          },
          std::move(trained)),
      plan_(std::move(plan)) {}

Result<std::unique_ptr<MixtureTokenStepPlanner>> MixtureTokenStepPlanner::Create(
    std::shared_ptr<const Plan> plan, std::vector<std::shared_ptr<const DatasetLengths>> lengths,
    const PlanOptions& options, TrainedTargets trained, PlanPosition first,
    plan::StepBudget budget) {
  if (plan == nullptr || plan->num_datasets() != lengths.size()) {
    return InvalidArgument("tokens_per_step: a mixture's row plan and its datasets' lengths");
  }
  // The windows cut rows of the row plan; the slots are dealt to this world.
  PlanOptions token_options = options;
  token_options.max_tokens_per_microbatch = plan->options().seq_len;
  STOKER_ASSIGN_OR_RETURN(
      std::unique_ptr<plan::TokenSteps> steps,
      plan::TokenSteps::Create(std::make_shared<const MixtureStepOrder>(plan, std::move(lengths)),
                               token_options, budget));
  std::unique_ptr<MixtureTokenStepPlanner> planner(new MixtureTokenStepPlanner(
      std::move(steps), std::move(plan), std::move(trained), budget.Text()));
  STOKER_RETURN_IF_ERROR(planner->CheckFirstStep(first.epoch, first.rows_consumed));
  return planner;
}

PlanState MixtureTokenStepPlanner::MakeState(const PlanPosition& pos) const {
  PlanState s = TokenStepPlanner::MakeState(pos);
  const PlanState rows = plan_->MakeState({pos.epoch, pos.rows_consumed >> kMicrobatchBits});
  s.global_row = rows.global_row;
  s.datasets = rows.datasets;
  s.stream_options = rows.stream_options;
  s.origin = rows.origin;
  return s;
}

Result<MixtureTokenSteps> OpenMixtureTokenSteps(std::vector<PlanDataset> datasets,
                                                const PlanOptions& options, const PlanState* resume,
                                                TokenStepPlanner::TrainedTargets trained,
                                                std::shared_ptr<const WindowCounter> counter) {
  if (options.tokens_per_step == 0) return InvalidArgument("tokens_per_step must be > 0");
  STOKER_ASSIGN_OR_RETURN(plan::StepBudget budget,
                          plan::StepBudget::Parse(options.tokens_per_step_schedule));
  std::vector<std::shared_ptr<const DatasetLengths>> lengths;
  for (const PlanDataset& d : datasets) lengths.push_back(d.lengths);
  STOKER_ASSIGN_OR_RETURN(
      std::unique_ptr<Plan> owned,
      Plan::Create(std::move(datasets), MixtureRowOptions(options), std::move(counter)));
  std::shared_ptr<const Plan> plan(std::move(owned));
  MixtureTokenSteps out;
  STOKER_ASSIGN_OR_RETURN(
      std::shared_ptr<MixtureTokenStepPlanner> probe,
      MixtureTokenStepPlanner::Create(plan, lengths, options, trained, {}, budget));
  const bool edited = resume != nullptr && resume->fingerprint != probe->Fingerprint() &&
                      !resume->datasets.empty() &&
                      resume->stream.rfind("token_steps step=", 0) == 0;
  if (!edited) {
    out.planner = std::move(probe);
    if (resume != nullptr) {
      STOKER_ASSIGN_OR_RETURN(out.start, out.planner->RestorePosition(*resume));
    }
    return out;
  }
  // An edited mixture (docs/plan.md, "Edits on resume"): the token options must be the
  // checkpoint's; the windows go on from the checkpoint's step in the continued row plan.
  const std::string differ =
      plan::OptionsThatDiffer(resume->options, probe->steps().options_text());
  if (!differ.empty()) {
    return FailedPrecondition("the checkpoint was written by another plan: " + differ +
                              "; resume with the checkpoint's options");
  }
  const uint64_t mask = (uint64_t{1} << TokenStepPlanner::kMicrobatchBits) - 1;
  if ((resume->position.rows_consumed & mask) != 0) {
    return FailedPrecondition(
        "the checkpoint is in the middle of a step (microbatch " +
        std::to_string(resume->position.rows_consumed & mask) +
        "), and the mixture was edited: an edited mixture continues from a checkpoint taken at a "
        "step's first microbatch; resume this one with the checkpoint's mixture");
  }
  PlanState rows = *resume;
  rows.position = {resume->position.epoch,
                   resume->position.rows_consumed >> TokenStepPlanner::kMicrobatchBits};
  STOKER_ASSIGN_OR_RETURN(Plan::Continued continued, plan->ContinueFrom(rows));
  std::shared_ptr<const Plan> continued_plan(std::move(continued.plan));
  STOKER_ASSIGN_OR_RETURN(out.planner,
                          MixtureTokenStepPlanner::Create(continued_plan, lengths, options, trained,
                                                          continued.position, budget));
  PlanState at = *resume;
  at.fingerprint = out.planner->Fingerprint();
  at.position =
      TokenStepPlanner::PositionOf(continued.position.epoch, continued.position.rows_consumed, 0);
  at.world_size = 0;  // at a step's first microbatch: any world continues it
  STOKER_ASSIGN_OR_RETURN(out.start, out.planner->RestorePosition(at));
  out.summary = std::move(continued.summary);
  return out;
}

}  // namespace stoker
