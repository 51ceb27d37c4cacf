// SkipStepsInState (state_edit.h): a skip range added to a checkpoint's plan state.
#include "plan/state_edit.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "plan/document_skips.h"
#include "plan/token_step_edits.h"
#include "stoker/plan.h"

namespace stoker {

Result<std::string> SkipStepsInState(std::string_view state_json, uint64_t first, uint64_t last) {
  STOKER_ASSIGN_OR_RETURN(PlanState state, PlanState::FromJson(state_json));
  if (last < first) {
    return InvalidArgument("skip steps " + std::to_string(first) + ".." + std::to_string(last) +
                           ": the last step is before the first (give FIRST..LAST, both "
                           "included)");
  }
  if (IsTokenStepsState(state)) return SkipTokenStepsInState(state_json, state, first, last);
  if (!state.stream.empty()) {
    return InvalidArgument(
        "this is a stoker.Stream's state: a stream's order is not a function of the step, so "
        "steps cannot be skipped in it (skip steps works on datasets and mixtures)");
  }
  if (state.world_size == 0 || state.batch_size == 0) {
    return InvalidArgument(
        "the state records no world size or batch size, so its steps cannot be found (write it "
        "with stoker.Loader.state_dict() or `stoker plan --state`)");
  }
  const uint64_t rows_per_step = uint64_t{state.world_size} * state.batch_size;
  const uint64_t at = state.position.rows_consumed / rows_per_step;
  if (first < at || (first == at && state.position.rows_consumed % rows_per_step != 0)) {
    return InvalidArgument("skip steps " + std::to_string(first) + ".." + std::to_string(last) +
                           ": the state is at step " + std::to_string(at) + " of epoch " +
                           std::to_string(state.position.epoch) + " and step " +
                           std::to_string(first) +
                           " was served already; edit an earlier checkpoint, or skip from step " +
                           std::to_string(at + 1) + " on");
  }
  nlohmann::json j = nlohmann::json::parse(state_json);
  nlohmann::json& plan = j.contains("plan_state") ? j["plan_state"] : j;
  nlohmann::json range = {{"epoch", state.position.epoch},
                          {"from", first * rows_per_step},
                          {"to", (last + 1) * rows_per_step},
                          {"steps", std::to_string(first) + ".." + std::to_string(last)},
                          {"world_size", state.world_size},
                          {"batch_size", state.batch_size}};
  if (!plan.contains("skip")) plan["skip"] = nlohmann::json::array();
  plan["skip"].push_back(std::move(range));
  return j.dump();
}

Result<std::string> DropSourceInState(std::string_view state_json, const std::string& name) {
  STOKER_ASSIGN_OR_RETURN(PlanState state, PlanState::FromJson(state_json));
  if (state.datasets.empty()) {
    return InvalidArgument("drop source '" + name +
                           "': the state is not a mixture's (a run of one dataset, or a stream): "
                           "there is no other source to continue with");
  }
  nlohmann::json j = nlohmann::json::parse(state_json);
  nlohmann::json& plan = j.contains("plan_state") ? j["plan_state"] : j;
  std::vector<std::string> dropped = plan.value("drop", std::vector<std::string>());
  std::string names;
  bool found = false;
  size_t left = 0;
  for (const DatasetCursor& c : state.datasets) {
    names += (names.empty() ? "" : ", ") + c.name;
    found = found || c.name == name;
    bool gone = c.name == name;
    for (const std::string& d : dropped) gone = gone || d == c.name;
    left += gone ? 0 : 1;
  }
  if (!found) {
    return InvalidArgument("drop source '" + name +
                           "': the state has no dataset of that name (its "
                           "datasets: " +
                           names + ")");
  }
  if (left < 2) {
    return InvalidArgument("drop source '" + name + "': fewer than two datasets would be left (" +
                           names +
                           "), and an edited mixture continues only into two or more; "
                           "start a new run on the one that is left instead");
  }
  dropped.push_back(name);
  plan["drop"] = dropped;
  return j.dump();
}

Result<std::string> SkipDocumentsInState(std::string_view state_json,
                                         const std::vector<std::string>& ids) {
  STOKER_ASSIGN_OR_RETURN(PlanState state, PlanState::FromJson(state_json));
  if (!state.stream.empty() && !IsTokenStepsState(state)) {
    return InvalidArgument(
        "this is a stoker.Stream's state: documents cannot be quarantined in it yet (skip "
        "documents works on datasets and mixtures)");
  }
  if (ids.empty()) return InvalidArgument("skip documents: no document id given");
  std::vector<std::string> out = state.skip_documents;
  for (const std::string& id : ids) {
    STOKER_RETURN_IF_ERROR(ParseDocumentQuery(id).status());
    if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
  }
  nlohmann::json j = nlohmann::json::parse(state_json);
  nlohmann::json& plan = j.contains("plan_state") ? j["plan_state"] : j;
  plan["skip_documents"] = out;
  return j.dump();
}

}  // namespace stoker
