// The loader engine's seam: a BatchPlanner says which rows each step holds, and DocumentReaders
// serve the tokens those rows name. Loader::OpenWithPlanner runs the engine (workers, pinned
// ring, copier, monitor) over any pair; the indexed Plan (Loader::Open) and the stream
// (stoker/stream.h) are its two planners, side by side.
//
// A row piece {dataset, document, offset, length} names tokens [offset, offset + length) of
// document `document` of reader `readers[dataset]`. What a "document" is belongs to the planner
// and its readers: a dataset's document for a Plan, a tokenized piece handle for the stream.
// Besides the rows, a planner may offer capabilities, each with a default that says it has none:
// provenance (Explain), steps per epoch, its fingerprint, the long documents it left out,
// elastic states, and a look-ahead that
// the loader drives as it delivers (Started, Delivered, Stopped). Loader::Next and Loader::Explain
// call them without knowing which planner they hold.
// Thread-safe: every method of both interfaces is const and may be called from many threads,
// except the look-ahead's three, which the loader calls from one thread at a time.
#pragma once

#include <string>
#include <vector>

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
  // The steps of `epoch` (the same on every rank). kUnimplemented by default.
  virtual Result<uint64_t> StepsPerEpoch(uint64_t epoch) const {
    (void)epoch;
    return Unimplemented("this planner does not count its steps per epoch");
  }
  // The batches this rank has left in pos.epoch from `pos` (the step at `pos` included; for steps
  // counted in tokens, microbatches). kUnimplemented by default.
  virtual Result<uint64_t> BatchesRemaining(const PlanPosition& pos) const {
    (void)pos;
    return Unimplemented("this planner does not count the batches left in its epoch");
  }
  // The fingerprint its states carry (PlanState::fingerprint); "" for a planner without one.
  virtual std::string Fingerprint() const { return ""; }
  // The plan behind an indexed planner (Loader::plan()); null for the others.
  virtual const Plan* plan() const { return nullptr; }
  // What LoaderOptions::long_documents left out of the rows, over all datasets (LoaderStats).
  virtual LongDocumentCounts LongDocuments() const { return {}; }
  // Elastic resume: from the states of every rank of another world (or batch size), all at the
  // same step and in rank order, the state that continues this rank (restore it with
  // RestorePosition). kUnimplemented by default (the stream has it, docs/streaming.md).
  virtual Result<PlanState> ElasticState(const std::vector<PlanState>& states) const {
    (void)states;
    return Unimplemented(
        "an elastic resume from every rank's state is for stream loaders (stoker/stream.h)");
  }
  // The look-ahead: delivery (re)starts at `pos` (the loader's open and each Restore); a batch was
  // delivered, `next` being the position after it; the loader is closing (stop fetching). A
  // planner whose readers fetch ahead (remote data) schedules from here; no-ops by default.
  virtual void Started(const PlanPosition& pos) const { (void)pos; }
  virtual void Delivered(const PlanPosition& next) const { (void)next; }
  virtual void Stopped() const {}
};

}  // namespace stoker
