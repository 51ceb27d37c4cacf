// Walking a plan over many steps (`stoker trace`, `stoker summary`, docs/lineage.md): every piece
// of every rank's rows, step after step, straight from the plan (no per-step JSON), and the
// position a given number of steps further on without building rows.
// Thread-safe: free functions over a const Plan (itself thread-safe).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "stoker/plan.h"
#include "stoker/status.h"

namespace stoker {

class DocumentSkips;  // plan/document_skips.h

// One piece of one row of one rank's batch of a walked step.
struct WalkedPiece {
  uint64_t step = 0;        // the walker's step number (first_step + steps walked before it)
  PlanPosition position;    // where the step starts
  uint64_t epoch_step = 0;  // the step counted from its epoch's first row (Batch::step)
  uint32_t rank = 0;
  uint32_t row = 0;         // the row within the rank's batch
  bool repeated = false;    // remainder=pad took the row from the next epoch
  uint64_t row_offset = 0;  // where in the row the piece starts
  RowPiece piece;           // dataset, document, offset, length
  // With several datasets: the epoch of the dataset's own order and, with a schedule, the phase.
  std::optional<uint64_t> dataset_epoch;
  std::optional<uint64_t> phase;
};

// The position `steps` global steps after `pos` (moving to the next epoch's row 0 after an epoch's
// last step, as Plan::Advance does), skipping whole epochs without building their rows.
PlanPosition AdvanceSteps(const Plan& plan, PlanPosition pos, uint64_t steps);

// Walks `steps` global steps of `plan` from `start` (every rank, every row, in rank then row
// order), calling `visit` for each piece; `first_step` numbers the first. Stops at the first
// error `visit` returns. Returns the position after the last step walked. `skips` (null: none):
// documents quarantined on resume, whose pieces the loader left out of the rows; so does the walk.
Result<PlanPosition> WalkPlanSteps(const Plan& plan, PlanPosition start, uint64_t first_step,
                                   uint64_t steps,
                                   const std::function<Status(const WalkedPiece&)>& visit,
                                   const DocumentSkips* skips = nullptr);

// What `steps` global steps of `plan` from `start` consumed, per dataset and schedule phase (every
// rank): `stoker summary`, and the exact per-source figures a metrics sink wants, from the plan.
struct DatasetTokenCounts {
  uint64_t tokens = 0;
  uint64_t documents = 0;  // documents whose first token was consumed (pieces at offset 0)
  uint64_t pieces = 0;
  uint64_t repeated_tokens = 0;  // of `tokens`, in rows remainder=pad repeated from next epoch
};
struct PhaseTokenCounts {
  uint64_t rows = 0;
  std::vector<DatasetTokenCounts> datasets;  // one per dataset of the plan
};
// Keyed by phase (index into options().phases; 0 for a plan without a schedule).
Result<std::map<uint64_t, PhaseTokenCounts>> CountPlanSteps(const Plan& plan, PlanPosition start,
                                                            uint64_t steps,
                                                            const DocumentSkips* skips = nullptr);

}  // namespace stoker
