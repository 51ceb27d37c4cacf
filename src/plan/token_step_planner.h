// TokenStepPlanner: steps counted in tokens (TokenSteps, token_steps.h) as the loader's planner
// (stoker/planner.h). Every batch is one microbatch: one row of max_tokens_per_microbatch tokens
// (batch_size 1), with the step's figures (StepFigures). A position is (epoch, the step's first
// position in the epoch's document order · 2^16 + the microbatch): the same at every world size,
// so a checkpoint at a step's first microbatch resumes at any world size (elastic); one taken
// mid-step resumes at another world size with what is left of that step dealt anew. Steps are
// computed when first asked for and kept (the last few whole; every step start's index), so the
// first batch reads only its own window; a checkpoint carries the step index.
// Thread-safe: every method is const; the caches are locked.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "plan/document_skips.h"
#include "plan/plan_provenance.h"
#include "plan/token_steps.h"
#include "stoker/planner.h"

namespace stoker {

class TokenStepPlanner : public BatchPlanner {
 public:
  // The trained targets of a piece (labels that are not -100): by default, for text, the piece's
  // tokens whose next token lies in the document; a chat loader counts its loss mask.
  using TrainedTargets = std::function<Result<uint64_t>(const RowPiece& piece)>;

  // `options`: one rank's (rank, world_size) with tokens_per_step > 0. `fingerprint`: the row
  // plan's fingerprint of the same dataset and options (fingerprint.h, which adds the token
  // options); made when first asked for (it may hash every length). Null: computed from
  // `lengths` (their totals when they carry them).
  static Result<std::unique_ptr<TokenStepPlanner>> Create(
      std::shared_ptr<const DatasetLengths> lengths, const PlanOptions& options,
      std::function<std::string()> fingerprint = nullptr, TrainedTargets trained = nullptr);

  PlanPosition Normalize(const PlanPosition& pos) const override;
  PlanPosition Advance(const PlanPosition& pos) const override;
  Status BatchAt(const PlanPosition& pos, Batch* out) const override;
  PlanState MakeState(const PlanPosition& pos) const override;
  Result<PlanPosition> RestorePosition(const PlanState& state) const override;
  // Batches (microbatches) per rank in `epoch`: walks the whole epoch's steps.
  Result<uint64_t> StepsPerEpoch(uint64_t epoch) const override;
  std::string Fingerprint() const override;
  // Batches (microbatches) of this rank from `pos` to its epoch's end: walks the steps left.
  Result<uint64_t> BatchesRemaining(const PlanPosition& pos) const override;

  // The step that holds `pos` (computed or cached) and its index in the epoch.
  struct Located {
    std::shared_ptr<const plan::TokenStep> step;
    uint64_t index = 0;
  };
  Result<Located> Locate(const PlanPosition& pos) const;
  const plan::TokenSteps& steps() const { return *steps_; }

  // Provenance (Explain: each microbatch's pieces, through `map`) and documents quarantined on
  // resume (`skips`: left out of every microbatch, its figures and provenance, and written into
  // every state); token_step_edits.cc. Set before the planner is shared (not thread-safe).
  void SetProvenance(std::shared_ptr<const ProvenanceMap> map) { provenance_ = std::move(map); }
  void SetDocumentSkips(std::shared_ptr<const DocumentSkips> skips);  // drops the steps cached
  Result<StepProvenance> Explain(const PlanPosition& pos) const override;
  // The position of step `index` of `epoch` (its first microbatch); {epoch + 1, 0} when the
  // epoch has fewer steps. Walks from the nearest step start known.
  Result<PlanPosition> StepStart(uint64_t epoch, uint64_t index) const;

  static constexpr uint64_t kMicrobatchBits = 16;
  static PlanPosition PositionOf(uint64_t epoch, uint64_t first, uint64_t microbatch) {
    return {epoch, (first << kMicrobatchBits) | microbatch};
  }

 protected:
  // A planner of `steps` (a mixture's: token_steps_mixture.h); call CheckFirstStep after.
  TokenStepPlanner(std::unique_ptr<plan::TokenSteps> steps,
                   std::function<std::string()> fingerprint, TrainedTargets trained);
  // kInvalidArgument when the step at position `first` of `epoch` holds no token (nothing to
  // plan).
  Status CheckFirstStep(uint64_t epoch = 0, uint64_t first = 0) const;

 private:
  Result<uint64_t> TrainedOf(const plan::TokenStep& step) const;
  bool Skipped(const RowPiece& p) const {
    return skips_ != nullptr && skips_->Contains(0, p.document);
  }

  std::unique_ptr<plan::TokenSteps> steps_;
  std::function<std::string()> fingerprint_fn_;
  TrainedTargets trained_;
  std::shared_ptr<const ProvenanceMap> provenance_;
  std::shared_ptr<const DocumentSkips> skips_;
  mutable std::once_flag fingerprint_once_;
  mutable std::string fingerprint_;
  mutable std::mutex mu_;
  // (epoch, first position) -> the step's index in its epoch, for every step start seen.
  mutable std::map<std::pair<uint64_t, uint64_t>, uint64_t> index_;
  // The last steps computed, newest last, with their global trained targets.
  struct Cached {
    uint64_t epoch = 0;
    std::shared_ptr<const plan::TokenStep> step;
    uint64_t trained = 0;
    uint64_t tokens = 0;  // step->tokens less the quarantined documents' pieces
  };
  mutable std::vector<Cached> recent_;
  // An elastic resume mid-step: the step at (epoch, first) is what is left of it after
  // `from_world` ranks' microbatches before `from_microbatch` (TokenSteps::RemainderAt).
  struct Remainder {
    uint64_t epoch = 0, first = 0;
    uint32_t from_world = 0, from_microbatch = 0;
  };
  mutable std::optional<Remainder> remainder_;
  Result<Cached> StepLocked(uint64_t epoch, uint64_t first) const;
};

}  // namespace stoker
