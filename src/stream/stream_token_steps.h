// StreamTokenSteps: steps counted in tokens on a stream (docs/streaming.md, "Steps counted in
// tokens"). Each rank cuts its own documents, in its shuffle buffer's draw order, into windows of
// ⌈tokens_per_step / world_size⌉ tokens (balance='attention': of the step's common cost target,
// step_windows.h, so that the ranks' costs are even) and balances each window over its
// microbatches with the
// indexed path's AssignStepSlots and cost model (plan/token_steps.h). Every rank replays every
// rank's draw order from the pre-scan's lengths (DrawOrder), so all ranks agree, with no
// communication, on each step's microbatch count (the most any rank's window needs), the epoch's
// step count (the fewest full windows of any rank) and the step's global tokens, trained tokens
// (chat: each document's loss-mask targets, kept by the pre-scan) and imbalance.
// Thread-safe: immutable after Create but for the per-epoch plans (locked).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "plan/token_steps.h"
#include "stream/rank_stream.h"

namespace stoker::stream {

class StreamTokenSteps {
 public:
  // `ctx` must have its pre-scan (the replay needs every document's length); `options` gives
  // tokens_per_step (> 0), microbatches, max_tokens_per_microbatch (0: seq_len), balance and
  // step_cost (already resolved from model=). kInvalidArgument for options that do not fit.
  static Result<std::shared_ptr<const StreamTokenSteps>> Create(
      std::shared_ptr<const StreamContext> ctx, const PlanOptions& options);

  // What every rank knows of one epoch's steps.
  struct EpochPlan {
    std::vector<uint32_t> microbatches;    // per step, the same on every rank
    std::vector<uint64_t> global_tokens;   // Σ over ranks of the step's window tokens
    std::vector<uint64_t> global_trained;  // Σ over ranks of their trained targets
    std::vector<double> imbalance;         // max / mean over ranks of the window's cost
    std::vector<uint64_t> own_tokens;      // this rank's window tokens (checks the live stream)
    uint64_t steps() const { return microbatches.size(); }
  };
  Result<std::shared_ptr<const EpochPlan>> Epoch(uint64_t epoch) const;

  // One step of this rank: its microbatches (one row each) and figures (microbatch 0).
  struct Step {
    std::vector<PackedRow> microbatches;
    StepFigures figures;
  };
  // Draws the window of `step` from `stream` (at that step's start) and balances it.
  Result<Step> Next(RankStream* stream, uint64_t epoch, uint64_t step) const;

  uint64_t budget() const { return budget_; }  // tokens per microbatch
  // The token options in clear (for the stream's fingerprint and options text).
  const std::string& options_text() const { return options_text_; }

 private:
  StreamTokenSteps() = default;
  Result<EpochPlan> Replay(uint64_t epoch) const;
  // One rank's pieces (their lengths) into at least `microbatches` microbatches.
  Result<plan::SlotAssignment> Assign(const std::vector<uint64_t>& lengths,
                                      uint32_t microbatches) const;

  std::shared_ptr<const StreamContext> ctx_;
  PlanOptions options_;
  plan::CostModel cost_;
  uint64_t budget_ = 0;    // max_tokens_per_microbatch
  uint64_t per_rank_ = 0;  // ⌈tokens_per_step / world_size⌉
  bool chat_ = false;
  bool by_cost_ = false;
  uint64_t pad_ = 1;  // pad_each_document_to (1: none)  // windows cut by cost
                      // (balance='attention'), else by tokens
  std::string options_text_;
  mutable std::mutex mu_;
  mutable std::map<uint64_t, std::shared_ptr<const EpochPlan>> epochs_;  // the last few
};

}  // namespace stoker::stream
