#include "plan/token_step_planner.h"

#include <algorithm>
#include <cstdlib>

#include "plan/fingerprint.h"
#include "plan/options_text.h"

namespace stoker {
namespace {

constexpr uint64_t kMicrobatchMask = (uint64_t{1} << TokenStepPlanner::kMicrobatchBits) - 1;
constexpr size_t kRecentSteps = 8;
constexpr std::string_view kStreamTag = "token_steps step=";

}  // namespace

TokenStepPlanner::TokenStepPlanner(std::unique_ptr<plan::TokenSteps> steps,
                                   std::function<std::string()> fingerprint, TrainedTargets trained)
    : steps_(std::move(steps)),
      fingerprint_fn_(std::move(fingerprint)),
      trained_(std::move(trained)) {}

Result<std::unique_ptr<TokenStepPlanner>> TokenStepPlanner::Create(
    std::shared_ptr<const DatasetLengths> lengths, const PlanOptions& options,
    std::function<std::string()> fingerprint, TrainedTargets trained) {
  if (!fingerprint && lengths != nullptr) {
    fingerprint = [lengths, options] {
      uint64_t tokens = 0;
      if (lengths->totals) {
        tokens = lengths->totals->tokens;
      } else {
        for (uint64_t d = 0; d < lengths->num_documents(); ++d) tokens += lengths->length(d);
      }
      return plan::ComputeFingerprint({PlanDataset{lengths, 1.0}}, {tokens}, options);
    };
  }
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<plan::TokenSteps> steps,
                          plan::TokenSteps::Create(std::move(lengths), options));
  std::unique_ptr<TokenStepPlanner> planner(
      new TokenStepPlanner(std::move(steps), std::move(fingerprint), std::move(trained)));
  STOKER_RETURN_IF_ERROR(planner->CheckFirstStep());
  return planner;
}

Status TokenStepPlanner::CheckFirstStep(uint64_t epoch, uint64_t first) const {
  STOKER_ASSIGN_OR_RETURN(plan::TokenStep step, steps_->StepAt(epoch, first));
  if (step.empty()) {
    return InvalidArgument("tokens_per_step: " + steps_->order().name() + " has no token to plan");
  }
  return Status::OK();
}

Result<uint64_t> TokenStepPlanner::TrainedOf(const plan::TokenStep& step) const {
  uint64_t trained = 0;
  for (const RowPiece& p : step.pieces) {
    if (Skipped(p)) continue;
    if (trained_) {
      STOKER_ASSIGN_OR_RETURN(uint64_t n, trained_(p));
      trained += n;
      continue;
    }
    // Targets [offset + 1, min(length, offset + n + 1)): the last token of a document has none.
    const uint64_t length = steps_->order().DocumentLength(p.dataset, p.document);
    trained += std::min(length, p.offset + p.length + 1) - (p.offset + 1);
  }
  return trained;
}

Result<TokenStepPlanner::Cached> TokenStepPlanner::StepLocked(uint64_t epoch,
                                                              uint64_t first) const {
  for (const Cached& c : recent_) {
    if (c.epoch == epoch && c.step->first == first) return c;
  }
  const bool rest = remainder_ && remainder_->epoch == epoch && remainder_->first == first;
  STOKER_ASSIGN_OR_RETURN(
      plan::TokenStep step,
      rest ? steps_->RemainderAt(epoch, first, remainder_->from_world, remainder_->from_microbatch)
           : steps_->StepAt(epoch, first));
  Cached c;
  c.epoch = epoch;
  STOKER_ASSIGN_OR_RETURN(c.trained, TrainedOf(step));
  c.tokens = step.tokens;
  for (const RowPiece& p : step.pieces) c.tokens -= Skipped(p) ? p.length : 0;
  c.step = std::make_shared<const plan::TokenStep>(std::move(step));
  if (recent_.size() >= kRecentSteps) recent_.erase(recent_.begin());
  recent_.push_back(c);
  return c;
}

Result<TokenStepPlanner::Located> TokenStepPlanner::Locate(const PlanPosition& pos) const {
  const uint64_t first = pos.rows_consumed >> kMicrobatchBits;
  std::lock_guard<std::mutex> lock(mu_);
  STOKER_ASSIGN_OR_RETURN(Cached c, StepLocked(pos.epoch, first));
  auto known = index_.find({pos.epoch, first});
  if (known == index_.end()) {
    // Walk from the last known step start before `first` (or the epoch's start).
    uint64_t at = 0, index = 0;
    auto before = index_.lower_bound({pos.epoch, first});
    if (before != index_.begin() && std::prev(before)->first.first == pos.epoch) {
      --before;
      at = before->first.second;
      index = before->second;
    }
    index_[{pos.epoch, 0}] = 0;
    while (at < first) {
      STOKER_ASSIGN_OR_RETURN(plan::TokenStep s, steps_->StepAt(pos.epoch, at));
      if (s.empty()) break;
      at = s.end;
      index_[{pos.epoch, at}] = ++index;
    }
    if (at != first) {
      return InvalidArgument("position " + std::to_string(first) + " of epoch " +
                             std::to_string(pos.epoch) + " is not the start of a step");
    }
    known = index_.find({pos.epoch, first});
  }
  return Located{c.step, known->second};
}

PlanPosition TokenStepPlanner::Normalize(const PlanPosition& pos) const {
  PlanPosition p = pos;
  for (int tries = 0; tries < 3; ++tries) {
    Result<Located> at = Locate(p);
    if (!at.ok()) return p;  // BatchAt reports the error
    if (!at->step->empty() && (p.rows_consumed & kMicrobatchMask) < at->step->slots.microbatches) {
      return p;
    }
    p = at->step->empty() ? PlanPosition{p.epoch + 1, 0} : Advance(p);
  }
  return p;
}

PlanPosition TokenStepPlanner::Advance(const PlanPosition& pos) const {
  Result<Located> at = Locate(pos);
  if (!at.ok()) return pos;
  const plan::TokenStep& step = *at->step;
  const uint64_t m = (pos.rows_consumed & kMicrobatchMask) + 1;
  if (m < step.slots.microbatches) return PositionOf(pos.epoch, step.first, m);
  const PlanPosition next = PositionOf(pos.epoch, step.end, 0);
  {
    std::lock_guard<std::mutex> lock(mu_);
    index_[{pos.epoch, step.end}] = at->index + 1;
    Result<Cached> c = StepLocked(pos.epoch, step.end);
    if (c.ok() && c->step->empty()) return {pos.epoch + 1, 0};
  }
  return next;
}

Status TokenStepPlanner::BatchAt(const PlanPosition& pos, Batch* out) const {
  STOKER_ASSIGN_OR_RETURN(Located at, Locate(pos));
  const plan::TokenStep& step = *at.step;
  const uint32_t m = static_cast<uint32_t>(pos.rows_consumed & kMicrobatchMask);
  if (step.empty() || m >= step.slots.microbatches) {
    return OutOfRange("no microbatch " + std::to_string(m) + " in the step at position " +
                      std::to_string(pos.rows_consumed >> kMicrobatchBits) + " of epoch " +
                      std::to_string(pos.epoch));
  }
  uint64_t trained = 0, tokens = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    STOKER_ASSIGN_OR_RETURN(Cached c, StepLocked(pos.epoch, step.first));
    trained = c.trained;
    tokens = c.tokens;
  }
  const uint32_t rank = steps_->options().rank;
  out->position = pos;
  out->step = at.index;
  out->rank = rank;
  out->rows.assign(1, step.RowOf(rank, m));
  if (skips_ != nullptr) skips_->Filter(out);
  StepFigures f;
  f.global_tokens = tokens;
  f.global_trained_tokens = trained;
  const uint32_t mbs = step.slots.microbatches;
  for (uint32_t k = 0; k < mbs; ++k) {
    for (uint32_t i : step.slots.slots[static_cast<size_t>(rank) * mbs + k]) {
      if (Skipped(step.pieces[i])) continue;
      const uint64_t n = step.pieces[i].length;
      f.step_tokens += n;
      f.step_sum_l2 += n * n;
    }
  }
  f.step_imbalance = step.imbalance;
  f.step_budget = steps_->StepTokensAt(pos.epoch, step.first);
  f.microbatch = m;
  f.microbatches = mbs;
  out->figures = f;
  return Status::OK();
}

std::string TokenStepPlanner::Fingerprint() const {
  std::call_once(fingerprint_once_, [this] {
    if (fingerprint_fn_) fingerprint_ = fingerprint_fn_();
  });
  return fingerprint_;
}

PlanState TokenStepPlanner::MakeState(const PlanPosition& pos) const {
  PlanState s;
  s.position = pos;
  s.fingerprint = Fingerprint();
  s.world_size = steps_->options().world_size;
  s.batch_size = 1;
  s.options = steps_->options_text();
  if (skips_ != nullptr) s.skip_documents = skips_->ids();
  Result<Located> at = Locate(pos);
  s.stream = std::string(kStreamTag) + std::to_string(at.ok() ? at->index : 0);
  std::lock_guard<std::mutex> lock(mu_);
  if (remainder_ && remainder_->epoch == pos.epoch &&
      remainder_->first == pos.rows_consumed >> kMicrobatchBits) {
    s.stream += " from_world=" + std::to_string(remainder_->from_world) +
                " from_microbatch=" + std::to_string(remainder_->from_microbatch);
  }
  return s;
}

Result<PlanPosition> TokenStepPlanner::RestorePosition(const PlanState& state) const {
  if (state.stream.rfind(kStreamTag, 0) != 0) {
    return FailedPrecondition(
        "the checkpoint is not one of steps counted in tokens (it has no token_steps state): it "
        "was written without tokens_per_step; resume it without tokens_per_step");
  }
  STOKER_RETURN_IF_ERROR(SameDocumentSkips(state, skips_.get()));
  if (state.fingerprint != Fingerprint()) {
    const std::string differ = plan::OptionsThatDiffer(state.options, steps_->options_text());
    return FailedPrecondition(
        "the checkpoint was written by another plan: " +
        (differ.empty() ? std::string("the dataset or seq_len differs") : differ) +
        "; resume with the checkpoint's options");
  }
  const uint64_t index = std::strtoull(state.stream.c_str() + kStreamTag.size(), nullptr, 10);
  const uint64_t m = state.position.rows_consumed & kMicrobatchMask;
  const uint64_t first = state.position.rows_consumed >> kMicrobatchBits;
  const uint32_t w = steps_->options().world_size;
  // A checkpoint taken within what was left of a step after an elastic resume.
  std::optional<Remainder> rest;
  const size_t from = state.stream.find(" from_world=");
  if (from != std::string::npos) {
    const size_t mb = state.stream.find(" from_microbatch=");
    if (mb == std::string::npos) return InvalidArgument("malformed token_steps state");
    rest = Remainder{
        state.position.epoch, first,
        static_cast<uint32_t>(std::strtoul(state.stream.c_str() + from + 12, nullptr, 10)),
        static_cast<uint32_t>(std::strtoul(state.stream.c_str() + mb + 17, nullptr, 10))};
  }
  const bool elsewhere = state.world_size != 0 && state.world_size != w;
  if (rest && elsewhere && m != 0) {
    return FailedPrecondition(
        "the checkpoint of world size " + std::to_string(state.world_size) +
        " is in the middle of a step that was itself resumed from another world size: resume "
        "it at world size " +
        std::to_string(state.world_size) + ", or from a checkpoint at a step's first microbatch");
  }
  if (elsewhere && m != 0)
    rest = Remainder{state.position.epoch, first, state.world_size, static_cast<uint32_t>(m)};
  std::lock_guard<std::mutex> lock(mu_);
  recent_.clear();
  remainder_ = rest;
  index_[{state.position.epoch, first}] = index;
  if (!elsewhere || m == 0) return state.position;
  // What is left of the step, dealt to this world size, from its first microbatch; nothing
  // left: the next step.
  STOKER_ASSIGN_OR_RETURN(Cached c, StepLocked(state.position.epoch, first));
  if (!c.step->empty()) return PositionOf(state.position.epoch, first, 0);
  remainder_.reset();
  index_[{state.position.epoch, c.step->end}] = index + 1;
  return PositionOf(state.position.epoch, c.step->end, 0);
}

Result<uint64_t> TokenStepPlanner::BatchesRemaining(const PlanPosition& pos) const {
  const uint64_t m = pos.rows_consumed & kMicrobatchMask;
  uint64_t at = pos.rows_consumed >> kMicrobatchBits, batches = 0;
  for (bool first = true;; first = false) {
    STOKER_ASSIGN_OR_RETURN(plan::TokenStep s, steps_->StepAt(pos.epoch, at));
    if (s.empty()) return batches;
    batches += first ? s.slots.microbatches - std::min<uint64_t>(m, s.slots.microbatches)
                     : s.slots.microbatches;
    at = s.end;
  }
}

Result<uint64_t> TokenStepPlanner::StepsPerEpoch(uint64_t epoch) const {
  uint64_t at = 0, batches = 0;
  for (;;) {
    STOKER_ASSIGN_OR_RETURN(plan::TokenStep s, steps_->StepAt(epoch, at));
    if (s.empty()) return batches;
    batches += s.slots.microbatches;
    at = s.end;
  }
}

}  // namespace stoker
