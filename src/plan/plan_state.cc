// PlanState serialisation (docs/checkpoint-format.md).
#include <nlohmann/json.hpp>

#include "plan/state_skips.h"
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

nlohmann::json CursorsToJson(const std::vector<DatasetCursor>& cursors) {
  nlohmann::json out = nlohmann::json::array();
  for (const DatasetCursor& c : cursors) {
    out.push_back({{"name", c.name},
                   {"id", c.id},
                   {"documents", c.documents},
                   {"shards", c.shards},
                   {"key", c.key},
                   {"epoch", c.epoch},
                   {"row", c.row}});
  }
  return out;
}

std::vector<DatasetCursor> CursorsFromJson(const nlohmann::json& j) {
  std::vector<DatasetCursor> out;
  for (const nlohmann::json& c : j) {
    out.push_back({c.at("name").get<std::string>(), c.at("id").get<std::string>(),
                   Unsigned(c, "documents"), Unsigned(c, "shards"), Unsigned(c, "key"),
                   Unsigned(c, "epoch"), Unsigned(c, "row")});
  }
  return out;
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
  if (!options.empty()) j["options"] = options;
  if (!skip_documents.empty()) j["skip_documents"] = skip_documents;
  for (const SkipRange& s : skips) {
    nlohmann::json range = {{"epoch", s.epoch}, {"from", s.from}, {"to", s.to}};
    if (!s.steps.empty()) range["steps"] = s.steps;
    if (s.world_size != 0) range["world_size"] = s.world_size;
    if (s.batch_size != 0) range["batch_size"] = s.batch_size;
    if (!s.unit.empty()) range["unit"] = s.unit;
    j["skip"].push_back(std::move(range));
  }
  if (!drops.empty()) j["drop"] = drops;
  if (!datasets.empty()) {
    j["global_row"] = global_row;
    j["stream_options"] = stream_options;
    j["datasets"] = CursorsToJson(datasets);
  }
  if (origin) {
    j["origin"] = {{"row", origin->row},
                   {"datasets", CursorsToJson(origin->datasets)},
                   {"dormant", CursorsToJson(origin->dormant)}};
  }
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
    s.options = j.value("options", std::string());
    if (j.contains("skip_documents")) {
      s.skip_documents = j.at("skip_documents").get<std::vector<std::string>>();
    }
    if (j.contains("datasets")) {
      s.global_row = Unsigned(j, "global_row");
      s.stream_options = j.at("stream_options").get<std::string>();
      s.datasets = CursorsFromJson(j.at("datasets"));
    }
    if (j.contains("origin")) {
      const nlohmann::json& o = j.at("origin");
      s.origin = MixtureOrigin{Unsigned(o, "row"), CursorsFromJson(o.at("datasets")),
                               CursorsFromJson(o.at("dormant"))};
    }
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("malformed plan state: ") + e.what());
  }
  // The edits on resume ("skip", "drop"; absent in states written before them).
  STOKER_ASSIGN_OR_RETURN(StateEdits edits, ReadStateEdits(text));
  s.skips = std::move(edits.skips);
  s.drops = std::move(edits.drops);
  return s;
}

}  // namespace stoker
