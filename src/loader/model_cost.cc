#include "loader/model_cost.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "plan/cost_model.h"

namespace stoker {
namespace {

// "a,b" or "a,b,c" as numbers; false when the text is not that.
bool ParseNumbers(const std::string& text, StepCost* out) {
  std::vector<double> v;
  size_t at = 0;
  while (at <= text.size()) {
    size_t end = text.find(',', at);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(at, end - at);
    char* stop = nullptr;
    const double x = std::strtod(item.c_str(), &stop);
    if (item.empty() || stop != item.c_str() + item.size()) return false;
    v.push_back(x);
    at = end + 1;
  }
  if (v.size() < 2 || v.size() > 3) return false;
  *out = StepCost{v[0], v[1], v.size() == 3 ? v[2] : 0.0};
  return true;
}

}  // namespace

Result<StepCost> ResolveModelCost(const std::string& model) {
  StepCost cost;
  if (ParseNumbers(model, &cost)) {
    STOKER_RETURN_IF_ERROR(
        plan::ValidateCostModel({cost.a, cost.b, cost.c}).WithContext("model='" + model + "'"));
    return cost;
  }
  std::filesystem::path path(model);
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) path /= "config.json";
  std::ifstream in(path);
  if (!in) {
    return InvalidArgument("model='" + model + "': cannot read " + path.string() +
                           " (give a model directory, its config.json, or numbers 'a,b')");
  }
  std::stringstream text;
  text << in.rdbuf();
  STOKER_ASSIGN_OR_RETURN(plan::CostModel m, plan::CostModelFromConfig(text.str(), path.string()));
  return StepCost{m.a, m.b, m.c};
}

Result<PlanOptions> WithModelCost(PlanOptions options) {
  if (options.tokens_per_step > 0 && !options.model.empty()) {
    STOKER_ASSIGN_OR_RETURN(options.step_cost, ResolveModelCost(options.model));
  }
  return options;
}

}  // namespace stoker
