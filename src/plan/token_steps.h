// TokenSteps: steps counted in tokens (PlanOptions::tokens_per_step; docs/plan.md, "Balanced
// steps"). An epoch's shuffled document order (the same DocumentOrder as the row plan's; for a
// mixture, its merged rows: a StepOrder) is cut into windows whose tokens reach tokens_per_step;
// each window's documents (a document longer than a microbatch cut into pieces of at most
// max_tokens_per_microbatch tokens) go to (rank, microbatch) slots by AssignSlots
// (slot_assignment.h), or in order for balance=none. A step is computed from (epoch, its first
// position in the order) alone, so planning is lazy: the first step reads only its own window's
// lengths. Thread-safe: immutable after Create; StepAt is const and pure.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "plan/slot_assignment.h"
#include "plan/step_budget.h"
#include "stoker/plan.h"

namespace stoker::plan {

// One step: the window [first, end) of the epoch's order and its slots.
struct TokenStep {
  uint64_t first = 0;  // the window's first position in the epoch's document order
  uint64_t end = 0;    // the next step's first position
  // The window's document pieces, in order; slots.slots hold indices into it.
  std::vector<RowPiece> pieces;
  SlotAssignment slots;
  uint64_t tokens = 0;     // Σ of the pieces' lengths
  double imbalance = 1.0;  // max / mean over ranks of Σ cost of the rank's slots
  bool empty() const { return pieces.empty(); }
  // Rank r's microbatch m as a row.
  Row RowOf(uint32_t rank, uint32_t microbatch) const;
};

// What a step's window cuts: an epoch's order of units, each giving its document pieces: one
// dataset's shuffled documents (DocumentOrder), or a mixture's merged rows (token_steps_mixture.h).
// Thread-safe: every method is const.
class StepOrder {
 public:
  virtual ~StepOrder() = default;
  // Appends the pieces (each at most `budget` tokens) of the units of `epoch` from position
  // `first` on, a unit at a time, until *tokens reaches `until` or the epoch ends (adding each
  // piece's length to *tokens); returns the position after the last unit taken.
  virtual Result<uint64_t> Take(uint64_t epoch, uint64_t first, uint64_t until, uint64_t budget,
                                std::vector<RowPiece>* pieces, uint64_t* tokens) const = 0;
  // The length of document `document` of dataset `dataset` (a piece's RowPiece::dataset).
  virtual uint64_t DocumentLength(uint32_t dataset, uint64_t document) const = 0;
  // What error messages call it ("the dataset NAME", "the mixture of N datasets").
  virtual std::string name() const = 0;
  // Position `first` of `epoch` counted over the whole run (what a StepBudget's phases count).
  virtual uint64_t RunPosition(uint64_t epoch, uint64_t first) const = 0;
};

class TokenSteps {
 public:
  // One dataset; options.tokens_per_step > 0. kInvalidArgument for options that do not fit
  // (no microbatch budget, microbatches >= 65536, an invalid step_cost).
  static Result<std::unique_ptr<TokenSteps>> Create(std::shared_ptr<const DatasetLengths> lengths,
                                                    const PlanOptions& options);
  // Any order of units (a mixture's: token_steps_mixture.h), with the same checks of `options`;
  // a non-empty `budget` sets each step's tokens in place of options.tokens_per_step (a
  // batch-size schedule, step_budget.h; in options_text() as tokens_per_step_schedule=...).
  static Result<std::unique_ptr<TokenSteps>> Create(std::shared_ptr<const StepOrder> order,
                                                    const PlanOptions& options,
                                                    StepBudget budget = {});

  // The step whose window starts at position `first` of `epoch`'s order (empty when no token is
  // left from there: the epoch's end), dealt to `ranks` (0: options().world_size).
  Result<TokenStep> StepAt(uint64_t epoch, uint64_t first, uint32_t ranks = 0) const;
  // What is left of that step, dealt to `from_world` ranks, once their microbatches before
  // `from_microbatch` are done: those pieces dealt anew to options().world_size ranks (an
  // elastic resume mid-step). Its window (first, end) is the step's.
  Result<TokenStep> RemainderAt(uint64_t epoch, uint64_t first, uint32_t from_world,
                                uint32_t from_microbatch) const;
  // The same window dealt as today's fixed rows would be: best-fit rows of the budget, dealt
  // round robin; its max / mean rank cost (for `stoker plan --stats`).
  double FixedRowsImbalance(const TokenStep& step) const;

  uint64_t budget() const { return budget_; }
  // The tokens of the step whose window starts at position `first` of `epoch`.
  uint64_t StepTokensAt(uint64_t epoch, uint64_t first) const;
  const StepBudget& schedule() const { return schedule_; }
  const PlanOptions& options() const { return options_; }
  const CostModel& cost() const { return cost_; }
  const StepOrder& order() const { return *order_; }
  // "tokens_per_step=... microbatches=... max_tokens_per_microbatch=... balance=... cost=a,b,c"
  // with seq_len, seed and shuffle: what a checkpoint keeps in clear (PlanState::options).
  const std::string& options_text() const { return options_text_; }

 private:
  TokenSteps(std::shared_ptr<const StepOrder> order, const PlanOptions& options, CostModel cost,
             StepBudget schedule);
  // The pieces of *step into slots of `ranks` ranks, and its imbalance.
  Status Assign(TokenStep* step, uint32_t ranks) const;
  std::shared_ptr<const StepOrder> order_;
  PlanOptions options_;
  CostModel cost_;
  uint64_t budget_ = 0;
  StepBudget schedule_;
  std::string options_text_;
};

// The cost model a step is balanced by: options.step_cost for balance=attention (validated, and
// it must have an attention or per-document term), else a·L with a = 1. kInvalidArgument otherwise.
Result<CostModel> StepCostModel(const PlanOptions& options);

// The pieces' rooms (lengths padded to pad_each_document_to) into `ranks` ranks' microbatches (at
// least min_microbatches each, at most max_documents pieces each when it is > 0) as `balance`
// says: AssignSlots, or for BalanceMode::kNone in order, each microbatch filled until the next
// piece does not fit, rows dealt round robin. What TokenSteps does with a window; a stream does it
// with each rank's own window (stream/stream_token_steps.h).
Result<SlotAssignment> AssignStepSlots(std::span<const uint64_t> lengths, uint32_t ranks,
                                       uint64_t budget, const CostModel& cost, BalanceMode balance,
                                       uint32_t min_microbatches, uint64_t max_documents = 0);

// Σ cost of each rank's slots.
std::vector<double> RankCosts(const SlotAssignment& a);

// max / mean of `costs` (1 when the mean is 0).
double MaxOverMean(const std::vector<double>& costs);

}  // namespace stoker::plan
