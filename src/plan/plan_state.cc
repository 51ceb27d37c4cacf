// PlanState serialisation (docs/checkpoint-format.md).
#include <nlohmann/json.hpp>

#include "stoker/plan.h"

namespace stoker {
namespace {

uint64_t Unsigned(const nlohmann::json& j, const char* key) {
  const nlohmann::json& v = j.at(key);
  if (!v.is_number_unsigned()) {
    throw nlohmann::json::type_error::create(
        302, std::string("\"") + key + "\" must be a non-negative integer", &v);
  }
  return v.get<uint64_t>();
}

}  // namespace

std::string PlanState::ToJson() const {
  nlohmann::json j;
  j["format"] = "stoker-plan-state";
  j["version"] = version;
  j["epoch"] = position.epoch;
  j["rows_consumed"] = position.rows_consumed;
  j["fingerprint"] = fingerprint;
  j["world_size"] = world_size;
  j["batch_size"] = batch_size;
  if (!stream.empty()) j["stream"] = stream;
  return j.dump();
}

Result<PlanState> PlanState::FromJson(std::string_view text) {
  PlanState s;
  try {
    nlohmann::json j = nlohmann::json::parse(text);
    // The checkpoint of a Loader (Python's state_dict()): the plan state inside. One format for
    // Loader and Plan states, so each reads the other's (docs/checkpoint-format.md).
    if (j.is_object() && j.value("format", "") == "stoker-loader-state" &&
        j.contains("plan_state") && j["plan_state"].is_object()) {
      j = nlohmann::json(j["plan_state"]);
    }
    if (!j.is_object() || j.value("format", "") != "stoker-plan-state") {
      return InvalidArgument("not a stoker plan state (\"format\" is not \"stoker-plan-state\")");
    }
    s.version = j.at("version").get<int>();
    if (s.version < 1 || s.version > kVersion) {
      return FailedPrecondition("plan state version " + std::to_string(s.version) +
                                " is not supported (this stoker reads version " +
                                std::to_string(kVersion) + ")");
    }
    s.position.epoch = Unsigned(j, "epoch");
    s.position.rows_consumed = Unsigned(j, "rows_consumed");
    s.fingerprint = j.at("fingerprint").get<std::string>();
    s.world_size = j.value("world_size", 0u);
    s.batch_size = j.value("batch_size", uint64_t{0});
    s.stream = j.value("stream", std::string());
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("malformed plan state: ") + e.what());
  }
  return s;
}

}  // namespace stoker
