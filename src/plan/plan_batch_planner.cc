// PlanBatchPlanner: the plan's rows as the loader's planner, with the edits of a resumed state
// (plan_batch_planner.h; docs/plan.md, "Skipping steps on resume").
#include "plan/plan_batch_planner.h"

namespace stoker {
namespace {

const std::vector<SkipRange>& SkipsOf(const std::shared_ptr<const StateEdits>& edits) {
  static const std::vector<SkipRange> kNone;
  return edits != nullptr ? edits->skips : kNone;
}

}  // namespace

PlanPosition PlanBatchPlanner::Normalize(const PlanPosition& pos) const {
  return SkipOver(*plan_, pos, SkipsOf(edits()));
}

PlanPosition PlanBatchPlanner::Advance(const PlanPosition& pos) const {
  return SkipOver(*plan_, plan_->Advance(pos), SkipsOf(edits()));
}

Status PlanBatchPlanner::BatchAt(const PlanPosition& pos, Batch* out) const {
  STOKER_ASSIGN_OR_RETURN(*out, plan_->GetBatchAt(pos, rank_));
  EmptySkippedRows(*plan_, SkipsOf(edits()), out);
  if (const std::shared_ptr<const DocumentSkips> s = skips(); s != nullptr) s->Filter(out);
  return Status::OK();
}

PlanState PlanBatchPlanner::MakeState(const PlanPosition& pos) const {
  PlanState state = plan_->MakeState(pos);
  if (const std::shared_ptr<const DocumentSkips> s = skips(); s != nullptr) {
    state.skip_documents = s->ids();
  }
  if (const std::shared_ptr<const StateEdits> e = edits(); e != nullptr) {
    state.skips = SkipsAhead(e->skips, pos);
    state.drops = e->drops;
  }
  return state;
}

Result<uint64_t> PlanBatchPlanner::BatchesRemaining(const PlanPosition& pos) const {
  return StepsRemainingWithSkips(*plan_, pos, SkipsOf(edits()));
}

void PlanBatchPlanner::SetStateEdits(const PlanState& state) const {
  std::shared_ptr<const StateEdits> edits;
  if (!state.skips.empty() || !state.drops.empty()) {
    edits = std::make_shared<const StateEdits>(StateEdits{state.skips, state.drops});
  }
  std::lock_guard<std::mutex> lock(skips_mu_);
  edits_ = std::move(edits);
}

Result<PlanPosition> PlanBatchPlanner::RestorePosition(const PlanState& state) const {
  // The same quarantine: restored as is. Another, and sources to find it in: resolved as
  // Loader::Open resolves it. Without sources: refused (SameDocumentSkips says why).
  const std::shared_ptr<const DocumentSkips> current = skips();
  std::shared_ptr<const DocumentSkips> quarantine = current;
  if (Status same = SameDocumentSkips(state, current.get()); !same.ok()) {
    if (sources_.empty()) return same;
    Result<std::shared_ptr<const DocumentSkips>> resolved = DocumentSkips::ForState(
        state.skip_documents, plan_->options().dataset_names, sources_, paths_);
    if (!resolved.ok()) return resolved.status().WithContext("resuming the checkpoint");
    quarantine = std::move(resolved).value();
  }
  STOKER_ASSIGN_OR_RETURN(const PlanPosition pos, plan_->Restore(state));
  {
    std::lock_guard<std::mutex> lock(skips_mu_);
    skips_ = std::move(quarantine);
  }
  SetStateEdits(state);
  return SkipOver(*plan_, pos, state.skips);
}

}  // namespace stoker
