// BatchPlanner: what the loader's engine needs from a plan — one rank's rows at a plan position.
//
// The engine depends on this small interface rather than on stoker::Plan directly, so tests can
// plan rows by hand (split documents, padding, faults) and the synthetic source can plan one fixed
// batch forever; PlanBatchPlanner adapts a real Plan. Positions follow stoker::Plan's meaning.
// Thread-safe: every method is const and may be called from many threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "stoker/plan.h"
#include "stoker/status.h"

namespace stoker::loader {

class BatchPlanner {
 public:
  virtual ~BatchPlanner() = default;
  // The first position at or after `pos` from which a step can be taken.
  virtual PlanPosition Normalize(const PlanPosition& pos) const = 0;
  // The position after the step that starts at `pos` (the next epoch's start after its last step).
  virtual PlanPosition Advance(const PlanPosition& pos) const = 0;
  // This rank's batch_size rows (and step number) for the step that starts at `pos`.
  virtual Status BatchAt(const PlanPosition& pos, Batch* out) const = 0;
  // The checkpoint for `pos`.
  virtual PlanState MakeState(const PlanPosition& pos) const = 0;
  // The position stored in `state`, or why it does not belong to this plan.
  virtual Result<PlanPosition> RestorePosition(const PlanState& state) const {
    return state.position;
  }
};

// Adapts a stoker::Plan for one rank. Thread-safe.
class PlanBatchPlanner final : public BatchPlanner {
 public:
  PlanBatchPlanner(std::shared_ptr<const Plan> plan, uint32_t rank)
      : plan_(std::move(plan)), rank_(rank) {}
  PlanPosition Normalize(const PlanPosition& pos) const override { return plan_->Normalize(pos); }
  PlanPosition Advance(const PlanPosition& pos) const override { return plan_->Advance(pos); }
  Status BatchAt(const PlanPosition& pos, Batch* out) const override {
    STOKER_ASSIGN_OR_RETURN(*out, plan_->GetBatchAt(pos, rank_));
    return Status::OK();
  }
  PlanState MakeState(const PlanPosition& pos) const override { return plan_->MakeState(pos); }
  Result<PlanPosition> RestorePosition(const PlanState& state) const override {
    return plan_->Restore(state);
  }

 private:
  std::shared_ptr<const Plan> plan_;
  uint32_t rank_;
};

// The same `rows` (one batch) at every position, forever: positions count steps in epoch 0.
// Serves tests and the synthetic source. Thread-safe.
class FixedBatchPlanner final : public BatchPlanner {
 public:
  explicit FixedBatchPlanner(std::vector<Row> rows) : rows_(std::move(rows)) {}
  PlanPosition Normalize(const PlanPosition& pos) const override { return pos; }
  PlanPosition Advance(const PlanPosition& pos) const override {
    return {pos.epoch, pos.rows_consumed + rows_.size()};
  }
  Status BatchAt(const PlanPosition& pos, Batch* out) const override {
    out->position = pos;
    out->step = rows_.empty() ? 0 : pos.rows_consumed / rows_.size();
    out->rows = rows_;
    return Status::OK();
  }
  PlanState MakeState(const PlanPosition& pos) const override {
    PlanState s;
    s.position = pos;
    s.fingerprint = "fixed";
    return s;
  }

 private:
  std::vector<Row> rows_;
};

}  // namespace stoker::loader
