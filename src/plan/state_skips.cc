// The edits of a resumed state as a plan reader honours them (state_skips.h).
#include "plan/state_skips.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <tuple>
#include <type_traits>

namespace stoker {

Result<StateEdits> ReadStateEdits(std::string_view state_json) {
  nlohmann::json j = nlohmann::json::parse(state_json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgument("the state is not a JSON object");
  }
  const nlohmann::json& plan = j.contains("plan_state") ? j["plan_state"] : j;
  StateEdits edits;
  const nlohmann::json skips = plan.value("skip", nlohmann::json::array());
  const nlohmann::json drops = plan.value("drop", nlohmann::json::array());
  const char* fix = " (write it with `stoker resume-edit` or stoker.edit_state)";
  if (!skips.is_array())
    return InvalidArgument(std::string("the state's 'skip' is not a list") + fix);
  for (const nlohmann::json& s : skips) {
    if (!s.is_object() || !s.contains("epoch") || !s.contains("from") || !s.contains("to") ||
        !s["epoch"].is_number_unsigned() || !s["from"].is_number_unsigned() ||
        !s["to"].is_number_unsigned() || s["to"].get<uint64_t>() < s["from"].get<uint64_t>()) {
      return InvalidArgument("the state's 'skip' list has a malformed range " + s.dump() + fix);
    }
    edits.skips.push_back({s["epoch"].get<uint64_t>(), s["from"].get<uint64_t>(),
                           s["to"].get<uint64_t>(), s.value("steps", std::string())});
  }
  std::sort(edits.skips.begin(), edits.skips.end(), [](const SkipRange& a, const SkipRange& b) {
    return std::tie(a.epoch, a.from) < std::tie(b.epoch, b.from);
  });
  if (!drops.is_array())
    return InvalidArgument(std::string("the state's 'drop' is not a list") + fix);
  for (const nlohmann::json& d : drops) {
    if (!d.is_string()) {
      return InvalidArgument("the state's 'drop' list has a non-name " + d.dump() + fix);
    }
    edits.drops.push_back(d.get<std::string>());
  }
  return edits;
}

std::string WithStateEdits(std::string_view plan_state_json, const StateEdits& edits,
                           const PlanPosition& pos) {
  nlohmann::json j = nlohmann::json::parse(plan_state_json);
  nlohmann::json skips = nlohmann::json::array();
  for (const SkipRange& s : edits.skips) {
    if (std::tie(s.epoch, s.to) <= std::tie(pos.epoch, pos.rows_consumed)) continue;  // passed
    nlohmann::json range = {{"epoch", s.epoch}, {"from", s.from}, {"to", s.to}};
    if (!s.steps.empty()) range["steps"] = s.steps;
    skips.push_back(std::move(range));
  }
  if (!skips.empty()) j["skip"] = std::move(skips);
  if (!edits.drops.empty()) j["drop"] = edits.drops;
  return j.dump();
}

PlanPosition SkipOver(const Plan& plan, PlanPosition pos, std::vector<SkipRange>* skips,
                      std::string* warning) {
  warning->clear();
  const uint64_t rows_per_step = plan.global_batch_rows();
  while (!skips->empty()) {
    const SkipRange& skip = skips->front();
    if (std::tie(pos.epoch, pos.rows_consumed) >= std::tie(skip.epoch, skip.to)) {
      skips->erase(skips->begin());  // passed (a later checkpoint, or another epoch)
      continue;
    }
    if (pos.epoch < skip.epoch || pos.rows_consumed + rows_per_step <= skip.from) break;
    if (pos.rows_consumed < skip.from) {
      // Another world size, whose steps do not meet the skip's first row: a step is never cut,
      // so the rows between are not served either.
      *warning += "skipping steps " + skip.steps + ": this world's step at global row " +
                  std::to_string(pos.rows_consumed) + " reaches into them, so its rows " +
                  std::to_string(pos.rows_consumed) + ".." + std::to_string(skip.from - 1) +
                  " are skipped too\n";
    }
    pos = skip.to >= plan.steps_per_epoch(skip.epoch) * rows_per_step
              ? PlanPosition{skip.epoch + 1, 0}  // the skip runs to its epoch's end
              : PlanPosition{skip.epoch, skip.to};
    skips->erase(skips->begin());
    pos = plan.Normalize(pos);
  }
  return pos;
}

uint64_t StepsRemainingWithSkips(const Plan& plan, const PlanPosition& pos,
                                 const std::vector<SkipRange>& skips) {
  const uint64_t rows_per_step = plan.global_batch_rows();
  uint64_t rows = pos.rows_consumed, steps = 0;
  for (const SkipRange& skip : skips) {
    if (skip.epoch != pos.epoch || skip.to <= rows) continue;
    if (skip.from > rows) steps += (skip.from - rows) / rows_per_step;  // whole steps before it
    rows = skip.to;
  }
  return steps + plan.steps_remaining({pos.epoch, rows});
}

Status DropDatasets(const std::vector<std::string>& drops, const std::vector<std::string>& names,
                    std::vector<PlanDataset>* datasets, PlanOptions* options) {
  if (drops.empty()) return Status::OK();
  std::string listed;
  for (const std::string& n : names) listed += (listed.empty() ? "" : ", ") + n;
  std::vector<size_t> keep;
  for (size_t k = 0; k < names.size(); ++k) {
    if (std::find(drops.begin(), drops.end(), names[k]) == drops.end()) keep.push_back(k);
  }
  for (const std::string& d : drops) {
    if (std::find(names.begin(), names.end(), d) == names.end()) {
      return InvalidArgument("the state drops '" + d + "', which these datasets do not have (" +
                             listed + "): give the datasets the run used");
    }
  }
  if (keep.size() < 2) {
    return InvalidArgument("the state drops datasets leaving fewer than two of " + listed +
                           ", and an edited mixture continues only into two or more");
  }
  auto pick = [&keep](const auto& v) {
    std::remove_cvref_t<decltype(v)> out;
    for (size_t k : keep) out.push_back(v[k]);
    return out;
  };
  for (size_t i = 0; i < options->phases.size(); ++i) {
    MixturePhase& phase = options->phases[i];
    phase.weights = pick(phase.weights);
    if (!phase.end_weights.empty()) phase.end_weights = pick(phase.end_weights);
    bool any = false;
    for (double w : phase.weights) any = any || w > 0;
    for (double w : phase.end_weights) any = any || w > 0;
    if (!any) {
      return InvalidArgument("dropping the state's datasets leaves phase " + std::to_string(i) +
                             " of the mixture with no weight: edit the mixture file instead");
    }
  }
  if (!options->dataset_names.empty()) options->dataset_names = pick(options->dataset_names);
  *datasets = pick(*datasets);
  return Status::OK();
}

}  // namespace stoker
