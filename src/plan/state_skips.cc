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
    SkipRange range;
    range.epoch = s["epoch"].get<uint64_t>();
    range.from = s["from"].get<uint64_t>();
    range.to = s["to"].get<uint64_t>();
    const nlohmann::json steps = s.value("steps", nlohmann::json(""));
    const nlohmann::json world = s.value("world_size", nlohmann::json(uint64_t{0}));
    const nlohmann::json batch = s.value("batch_size", nlohmann::json(uint64_t{0}));
    const nlohmann::json unit = s.value("unit", nlohmann::json(""));
    if (!steps.is_string() || !world.is_number_unsigned() || !batch.is_number_unsigned() ||
        !unit.is_string()) {
      return InvalidArgument("the state's 'skip' list has a malformed range " + s.dump() + fix);
    }
    range.steps = steps.get<std::string>();
    range.world_size = world.get<uint32_t>();
    range.batch_size = batch.get<uint64_t>();
    range.unit = unit.get<std::string>();
    edits.skips.push_back(std::move(range));
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

namespace {

// Whether `s` skips global rows (not token steps: token_step_edits.h) of `epoch`.
bool RowSkipOf(const SkipRange& s, uint64_t epoch) { return s.unit.empty() && s.epoch == epoch; }

}  // namespace

PlanPosition SkipOver(const Plan& plan, PlanPosition pos, const std::vector<SkipRange>& skips) {
  pos = plan.Normalize(pos);
  // Each move goes past one skip's end, so at most one per skip.
  for (size_t moves = 0; moves < skips.size(); ++moves) {
    auto inside = std::find_if(skips.begin(), skips.end(), [&pos](const SkipRange& s) {
      return RowSkipOf(s, pos.epoch) && s.from <= pos.rows_consumed && pos.rows_consumed < s.to;
    });
    if (inside == skips.end()) break;
    pos = plan.Normalize({pos.epoch, inside->to});  // the next epoch when no step is left
  }
  return pos;
}

size_t EmptySkippedRows(const Plan& plan, const std::vector<SkipRange>& skips, Batch* batch) {
  const PlanPosition& pos = batch->position;
  const uint64_t first = pos.rows_consumed + uint64_t{batch->rank} * plan.options().batch_size;
  const uint64_t end = first + batch->rows.size();
  size_t emptied = 0;
  for (const SkipRange& s : skips) {
    if (!RowSkipOf(s, pos.epoch) || s.to <= first || s.from >= end) continue;
    for (uint64_t row = std::max(first, s.from); row < std::min(end, s.to); ++row) {
      Row& r = batch->rows[row - first];
      if (!r.pieces.empty()) ++emptied;
      r.pieces.clear();
    }
  }
  return emptied;
}

std::vector<SkipRange> SkipsAhead(const std::vector<SkipRange>& skips, const PlanPosition& pos) {
  std::vector<SkipRange> out;
  for (const SkipRange& s : skips) {
    if (std::tie(s.epoch, s.to) > std::tie(pos.epoch, pos.rows_consumed)) out.push_back(s);
  }
  return out;
}

uint64_t StepsRemainingWithSkips(const Plan& plan, const PlanPosition& pos,
                                 const std::vector<SkipRange>& skips) {
  const uint64_t rows_per_step = plan.global_batch_rows();
  uint64_t rows = pos.rows_consumed, steps = 0;
  for (const SkipRange& skip : skips) {  // sorted by (epoch, from)
    if (!RowSkipOf(skip, pos.epoch) || skip.to <= rows) continue;
    if (skip.from > rows) {
      // The steps that start before the skip, the one reaching into it included (SkipOver).
      const uint64_t before = (skip.from - rows + rows_per_step - 1) / rows_per_step;
      const uint64_t left = plan.steps_remaining({pos.epoch, rows});
      if (before >= left) return steps + left;
      steps += before;
      rows += before * rows_per_step;
    }
    rows = std::max(rows, skip.to);
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
