// PlanBatchPlanner: the indexed path's planner for the loader engine (stoker/planner.h): one
// rank's batches of a stoker::Plan. The stream's planner (stream/stream_planner.h) sits beside it.
// Thread-safe: every method is const; the Plan is immutable.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>

#include "stoker/plan.h"
#include "stoker/planner.h"

namespace stoker {

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
  const std::shared_ptr<const Plan>& plan() const { return plan_; }
  uint32_t rank() const { return rank_; }

 private:
  std::shared_ptr<const Plan> plan_;
  uint32_t rank_;
};

}  // namespace stoker
