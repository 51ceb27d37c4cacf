// Steps counted in tokens with a resumed state's edits (token_step_edits.h), and the planner's
// provenance and step starts (token_step_planner.h).
#include "plan/token_step_edits.h"

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

namespace stoker {
namespace {

constexpr std::string_view kTokenStepsTag = "token_steps step=";

uint64_t TokenStepIndexOf(const PlanState& state) {
  return std::strtoull(state.stream.c_str() + kTokenStepsTag.size(), nullptr, 10);
}

bool InTokenSkip(const std::vector<SkipRange>& skips, uint64_t epoch, uint64_t index) {
  return std::any_of(skips.begin(), skips.end(), [&](const SkipRange& s) {
    return s.epoch == epoch && s.from <= index && index < s.to;
  });
}

}  // namespace

bool IsTokenStepsState(const PlanState& state) {
  return state.stream.rfind(kTokenStepsTag, 0) == 0;
}

Result<std::string> SkipTokenStepsInState(std::string_view state_json, const PlanState& state,
                                          uint64_t first, uint64_t last) {
  const uint64_t at = TokenStepIndexOf(state);
  const uint64_t microbatch =
      state.position.rows_consumed & ((uint64_t{1} << TokenStepPlanner::kMicrobatchBits) - 1);
  if (first < at || (first == at && microbatch != 0)) {
    return InvalidArgument(
        "skip steps " + std::to_string(first) + ".." + std::to_string(last) +
        ": the state is at token step " + std::to_string(at) +
        (microbatch != 0 ? " (microbatch " + std::to_string(microbatch) + ")" : std::string()) +
        " of epoch " + std::to_string(state.position.epoch) + " and step " + std::to_string(first) +
        " was begun already; edit an earlier checkpoint, or skip from step " +
        std::to_string(at + 1) + " on");
  }
  nlohmann::json j = nlohmann::json::parse(state_json);
  nlohmann::json& plan = j.contains("plan_state") ? j["plan_state"] : j;
  nlohmann::json range = {{"epoch", state.position.epoch},
                          {"from", first},
                          {"to", last + 1},
                          {"steps", std::to_string(first) + ".." + std::to_string(last)},
                          {"unit", kTokenStepsUnit}};
  if (!plan.contains("skip")) plan["skip"] = nlohmann::json::array();
  plan["skip"].push_back(std::move(range));
  return j.dump();
}

Result<uint64_t> TokenBatchesRemaining(const TokenStepPlanner& planner, const PlanPosition& pos,
                                       const std::vector<SkipRange>& skips) {
  STOKER_ASSIGN_OR_RETURN(TokenStepPlanner::Located located, planner.Locate(pos));
  const uint64_t mask = (uint64_t{1} << TokenStepPlanner::kMicrobatchBits) - 1;
  const uint64_t m = pos.rows_consumed & mask;
  uint64_t at = pos.rows_consumed >> TokenStepPlanner::kMicrobatchBits, batches = 0;
  for (uint64_t index = located.index;; ++index) {
    STOKER_ASSIGN_OR_RETURN(plan::TokenStep s, planner.steps().StepAt(pos.epoch, at));
    if (s.empty()) return batches;
    if (!InTokenSkip(skips, pos.epoch, index)) {
      const uint64_t mbs = s.slots.microbatches;
      batches += index == located.index ? mbs - std::min(m, mbs) : mbs;
    }
    at = s.end;
  }
}

Result<StepProvenance> TokenStepPlanner::Explain(const PlanPosition& pos) const {
  if (provenance_ == nullptr) {
    return Unimplemented("steps counted in tokens: this planner has no provenance map");
  }
  Batch batch;
  STOKER_RETURN_IF_ERROR(BatchAt(pos, &batch));
  return provenance_->Explain(batch, steps_->options().pad_each_document_to);
}

void TokenStepPlanner::SetDocumentSkips(std::shared_ptr<const DocumentSkips> skips) {
  std::lock_guard<std::mutex> lock(mu_);
  skips_ = std::move(skips);
  recent_.clear();  // their figures counted the documents now quarantined
}

Result<PlanPosition> TokenStepPlanner::StepStart(uint64_t epoch, uint64_t index) const {
  uint64_t at = 0, i = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, known] : index_) {  // the last known start at or before `index`
      if (key.first == epoch && known <= index && known >= i) {
        at = key.second;
        i = known;
      }
    }
  }
  for (; i < index; ++i) {
    STOKER_ASSIGN_OR_RETURN(plan::TokenStep s, steps_->StepAt(epoch, at));
    if (s.empty()) return PlanPosition{epoch + 1, 0};
    at = s.end;
  }
  STOKER_ASSIGN_OR_RETURN(plan::TokenStep s, steps_->StepAt(epoch, at));
  if (s.empty()) return PlanPosition{epoch + 1, 0};
  return PositionOf(epoch, at, 0);
}

}  // namespace stoker
