// PlanBatchPlanner: the indexed path's planner for the loader engine (stoker/planner.h): one
// rank's batches of a stoker::Plan, their provenance (from the shards of the plan's token
// sources, mapped on the first Explain), steps per epoch and fingerprint. The stream's planner
// (stream/stream_planner.h) sits beside it; the loader's IndexedPlanner (loader/loader_open.cc)
// adds the look-ahead of remote data to it.
// Thread-safe: every method is const; the Plan is immutable, the provenance map is made once, and
// the quarantined documents and the skips, which RestorePosition replaces, are swapped under a
// mutex.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/thread_annotations.h"
#include "plan/document_skips.h"
#include "plan/plan_provenance.h"
#include "plan/state_skips.h"
#include "stoker/plan.h"
#include "stoker/planner.h"
#include "stoker/token_source.h"

namespace stoker {

class PlanBatchPlanner : public BatchPlanner {
 public:
  // `sources` (in plan order, labelled by `paths`; a source's own path where a label is missing
  // or empty) are what Explain maps; without them Explain is kUnimplemented. `skips` (may be
  // null): documents quarantined on resume, left out of every batch and its provenance, and
  // written into every state. RestorePosition at a state quarantining others resolves them
  // against `sources` (DocumentSkips::ForState, as Loader::Open does) and leaves those out from
  // then on; without sources such a state is refused.
  PlanBatchPlanner(std::shared_ptr<const Plan> plan, uint32_t rank,
                   std::vector<std::shared_ptr<const TokenSource>> sources = {},
                   std::vector<std::string> paths = {},
                   std::shared_ptr<const DocumentSkips> skips = nullptr)
      : plan_(std::move(plan)),
        rank_(rank),
        sources_(std::move(sources)),
        paths_(std::move(paths)),
        skips_(std::move(skips)) {}
  // Steps skipped on resume (PlanState::skips, of global rows): a position inside one moves to
  // its end, and a step reaching into one from before serves padding from its first row on
  // (SkipOver, EmptySkippedRows: state_skips.h).
  PlanPosition Normalize(const PlanPosition& pos) const override;
  PlanPosition Advance(const PlanPosition& pos) const override;
  Status BatchAt(const PlanPosition& pos, Batch* out) const override;
  // The plan's state with the quarantined documents, the skips not yet passed and the drops.
  PlanState MakeState(const PlanPosition& pos) const override;
  // Also takes the state's skips and drops (those of a state without them: none).
  Result<PlanPosition> RestorePosition(const PlanState& state) const override;
  Result<StepProvenance> Explain(const PlanPosition& pos) const override;
  Result<uint64_t> StepsPerEpoch(uint64_t epoch) const override {
    return plan_->steps_per_epoch(epoch);
  }
  // Less the steps the skips leave out (StepsRemainingWithSkips).
  Result<uint64_t> BatchesRemaining(const PlanPosition& pos) const override;
  std::string Fingerprint() const override { return plan_->fingerprint(); }
  const Plan* plan() const override { return plan_.get(); }

  uint32_t rank() const { return rank_; }
  const std::vector<std::shared_ptr<const TokenSource>>& sources() const { return sources_; }
  // The documents quarantined now (null: none).
  std::shared_ptr<const DocumentSkips> skips() const {
    std::lock_guard<std::mutex> lock(skips_mu_);
    return skips_;
  }
  // The steps skipped and the datasets dropped now (null: none).
  std::shared_ptr<const StateEdits> edits() const {
    std::lock_guard<std::mutex> lock(skips_mu_);
    return edits_;
  }
  // Takes the skips and drops of `state` (Loader::Open at a state; RestorePosition does it too).
  void SetStateEdits(const PlanState& state) const;

 private:
  std::shared_ptr<const Plan> plan_;
  uint32_t rank_;
  std::vector<std::shared_ptr<const TokenSource>> sources_;
  std::vector<std::string> paths_;
  mutable std::mutex skips_mu_;
  mutable std::shared_ptr<const DocumentSkips> skips_ STOKER_GUARDED_BY(skips_mu_);
  mutable std::shared_ptr<const StateEdits> edits_ STOKER_GUARDED_BY(skips_mu_);
  mutable std::once_flag provenance_once_;
  mutable std::unique_ptr<ProvenanceMap> provenance_;
};

}  // namespace stoker
