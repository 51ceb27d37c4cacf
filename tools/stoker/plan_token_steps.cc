#include "plan_token_steps.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "plan/token_step_order.h"
#include "plan/token_step_planner.h"
#include "plan/token_steps_mixture.h"
#include "stoker/window_counter.h"

namespace stoker::cli {
namespace {

// Steps --stats measures when --steps is not given.
constexpr uint64_t kStatsSteps = 32;

int PrintTokenStepStats(const plan::TokenSteps& steps, uint64_t epoch, uint64_t max_steps,
                        bool json) {
  const PlanOptions& o = steps.options();
  double fixed_time = 0, balanced_time = 0, fixed_sum = 0, balanced_sum = 0;
  uint64_t measured = 0, min_mb = UINT64_MAX, max_mb = 0, tokens = 0;
  plan::OrderDisplacement order;  // docs/plan.md, "Order randomness"
  for (uint64_t first = 0; measured < max_steps; ++measured) {
    Result<plan::TokenStep> step = steps.StepAt(epoch, first);
    if (!step.ok()) return ReportError("plan", step.status());
    if (step->empty()) break;
    double total = 0;
    for (double c : step->slots.slot_cost) total += c;
    const double mean = total / o.world_size;  // the same documents either way
    const double fixed = steps.FixedRowsImbalance(*step);
    fixed_time += fixed * mean;
    balanced_time += step->imbalance * mean;
    fixed_sum += fixed;
    balanced_sum += step->imbalance;
    min_mb = std::min<uint64_t>(min_mb, step->slots.microbatches);
    max_mb = std::max<uint64_t>(max_mb, step->slots.microbatches);
    tokens += step->tokens;
    plan::AddOrderDisplacement(*step, &order);
    first = step->end;
  }
  if (measured == 0) return ReportError("plan", OutOfRange("the epoch has no step"));
  const double fixed = fixed_sum / measured, balanced = balanced_sum / measured;
  const double change = fixed_time > 0 ? balanced_time / fixed_time - 1 : 0;
  if (json) {
    nlohmann::json out = {{"epoch", epoch},
                          {"steps_measured", measured},
                          {"tokens_per_step", o.tokens_per_step},
                          {"world_size", o.world_size},
                          {"balance", BalanceModeName(o.balance)},
                          {"cost", {steps.cost().a, steps.cost().b, steps.cost().c}},
                          {"max_tokens_per_microbatch", steps.budget()},
                          {"microbatches_min", min_mb},
                          {"microbatches_max", max_mb},
                          {"fixed_rows_max_over_mean", fixed},
                          {"balanced_max_over_mean", balanced},
                          {"predicted_step_time_change", change},
                          {"order_displacement_max", order.max},
                          {"order_displacement_mean", order.mean()},
                          {"order_displacement_bound", order.bound},
                          {"order_displacement_relative", order.relative()},
                          {"bestfit_window_bound", o.bestfit_window - 1}};
    if (!steps.schedule().empty()) out["tokens_per_step_schedule"] = steps.schedule().Text();
    std::printf("%s\n", out.dump().c_str());
    return kExitOk;
  }
  std::printf(
      "steps counted in tokens: %llu tokens per step, world size %u, %llu tokens per microbatch, "
      "balance %s (cost %.6g*L + %.6g*L^2 + %.6g)\n",
      static_cast<unsigned long long>(o.tokens_per_step), o.world_size,
      static_cast<unsigned long long>(steps.budget()),
      std::string(BalanceModeName(o.balance)).c_str(), steps.cost().a, steps.cost().b,
      steps.cost().c);
  if (!steps.schedule().empty()) {  // each step's budget: the schedule's value at its first row
    std::printf("  tokens per step by global row: %s\n", steps.schedule().Text().c_str());
  }
  std::printf("  first %llu step(s) of epoch %llu: %llu tokens, %llu-%llu microbatches per rank\n",
              static_cast<unsigned long long>(measured), static_cast<unsigned long long>(epoch),
              static_cast<unsigned long long>(tokens), static_cast<unsigned long long>(min_mb),
              static_cast<unsigned long long>(max_mb));
  std::printf(
      "  per-rank cost max/mean: fixed rows %.2f  ->  balanced %.2f; predicted step time "
      "%+.0f%%\n",
      fixed, balanced, change * 100);
  std::printf(
      "  order: displacement in pieces max %llu, mean %.1f (bound: window pieces - 1 = %llu; "
      "today's bestfit_window - 1 = %llu); %.2f of a uniform reshuffle of each window\n",
      static_cast<unsigned long long>(order.max), order.mean(),
      static_cast<unsigned long long>(order.bound),
      static_cast<unsigned long long>(o.bestfit_window - 1), order.relative());
  return kExitOk;
}

}  // namespace

int RunTokenStepPlan(const PlanOptions& options, const std::vector<PlanDataset>& datasets,
                     uint64_t epoch, std::optional<uint64_t> steps, bool stats, bool json) {
  // A mixture: its row plan decides the documents, the windows cut its rows.
  auto open = [&]() -> Result<std::shared_ptr<const TokenStepPlanner>> {
    if (datasets.size() == 1 && options.tokens_per_step_schedule.empty()) {
      STOKER_ASSIGN_OR_RETURN(auto one, TokenStepPlanner::Create(datasets[0].lengths, options));
      return std::shared_ptr<const TokenStepPlanner>(std::move(one));
    }
    // A mixture, or one dataset with a schedule (over its row plan's global rows).
    STOKER_ASSIGN_OR_RETURN(
        MixtureTokenSteps mixed,
        OpenMixtureTokenSteps(datasets, options, nullptr, nullptr, SharedWindowCounter()));
    return std::shared_ptr<const TokenStepPlanner>(std::move(mixed.planner));
  };
  Result<std::shared_ptr<const TokenStepPlanner>> planner = open();
  if (!planner.ok()) return ReportError("plan", planner.status());
  if (stats)
    return PrintTokenStepStats((*planner)->steps(), epoch, steps.value_or(kStatsSteps), json);
  PlanPosition pos{epoch, 0};
  uint64_t printed_steps = 0;
  while (pos.epoch == epoch) {
    Batch b;
    Status st = (*planner)->BatchAt(pos, &b);
    if (!st.ok()) return ReportError("plan", st);
    const StepFigures& f = *b.figures;
    if (f.microbatch == 0 && steps && printed_steps++ >= *steps) break;
    // The step's token budget (a batch-size schedule's value at its first position).
    const uint64_t budget = f.step_budget;
    if (json) {
      nlohmann::json pieces = nlohmann::json::array();
      for (const RowPiece& p : b.rows[0].pieces) {
        pieces.push_back({p.dataset, p.document, p.offset, p.length});
      }
      nlohmann::json line = {{"epoch", pos.epoch},
                             {"step", b.step},
                             {"rank", b.rank},
                             {"microbatch", f.microbatch},
                             {"microbatches", f.microbatches},
                             {"step_budget", budget},
                             {"global_tokens", f.global_tokens},
                             {"step_tokens", f.step_tokens},
                             {"step_imbalance", f.step_imbalance},
                             {"pieces", std::move(pieces)}};
      std::printf("%s\n", line.dump().c_str());
    } else {
      std::printf(
          "epoch %llu step %llu rank %u microbatch %u/%u: %zu pieces, %llu tokens (step budget "
          "%llu)\n",
          static_cast<unsigned long long>(pos.epoch), static_cast<unsigned long long>(b.step),
          b.rank, f.microbatch, f.microbatches, b.rows[0].pieces.size(),
          static_cast<unsigned long long>(b.rows[0].num_tokens()),
          static_cast<unsigned long long>(budget));
    }
    pos = (*planner)->Advance(pos);
  }
  return kExitOk;
}

}  // namespace stoker::cli
