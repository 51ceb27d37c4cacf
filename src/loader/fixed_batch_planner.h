// FixedBatchPlanner: the same rows (one batch) at every position, forever; positions count steps
// in epoch 0. Serves the synthetic source and tests that plan rows by hand.
// Thread-safe: immutable after construction.
#pragma once

#include <utility>
#include <vector>

#include "stoker/planner.h"

namespace stoker::loader {

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
