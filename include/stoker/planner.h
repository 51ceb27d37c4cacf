// The loader engine's seam: a BatchPlanner says which rows each step holds, and DocumentReaders
// serve the tokens those rows name. Loader::OpenWithPlanner runs the engine (workers, pinned
// ring, copier, monitor) over any pair; the indexed Plan (Loader::Open) and the stream
// (stoker/stream.h) are its two planners, side by side.
//
// A row piece {dataset, document, offset, length} names tokens [offset, offset + length) of
// document `document` of reader `readers[dataset]`. What a "document" is belongs to the planner
// and its readers: a dataset's document for a Plan, a tokenized piece handle for the stream.
// Thread-safe: every method of both interfaces is const and may be called from many threads.
#pragma once

#include "stoker/document_reader.h"
#include "stoker/plan.h"
#include "stoker/provenance.h"
#include "stoker/status.h"

namespace stoker {

// One rank's rows at a plan position. Positions follow stoker::Plan's meaning (global rows of an
// epoch consumed by all ranks), so checkpoints (PlanState) look the same for every planner.
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
  // The position stored in `state`, or why it does not belong to this planner.
  virtual Result<PlanPosition> RestorePosition(const PlanState& state) const {
    return state.position;
  }
  // Which documents fill this rank's rows of the step that starts at `pos` (stoker/provenance.h),
  // without reading their tokens. kUnimplemented by default.
  virtual Result<StepProvenance> Explain(const PlanPosition& pos) const {
    (void)pos;
    return Unimplemented("provenance: this planner does not explain its rows");
  }
};

}  // namespace stoker
