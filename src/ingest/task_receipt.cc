#include "ingest/task_receipt.h"

#include <nlohmann/json.hpp>

namespace stoker {

using OrderedJson = nlohmann::ordered_json;

std::string TaskReceipt::ToJson() const {
  OrderedJson j;
  j["version"] = 1;
  j["task_index"] = task_index;
  j["task_count"] = task_count;
  j["plan_xxh3"] = plan_checksum;
  j["options"] = OrderedJson::parse(options_json);
  OrderedJson in = OrderedJson::array();
  for (const ReceiptInput& f : inputs) {
    in.push_back({{"path", f.key}, {"bytes", f.size_bytes}, {"xxh3", f.xxh3}});
  }
  j["inputs"] = std::move(in);
  for (auto [key, list] :
       {std::pair{"tfrecord", &tfrecord}, std::pair{"webdataset", &webdataset}}) {
    if (list->empty()) continue;
    OrderedJson files = OrderedJson::array();
    for (const RecordFileInfo& f : *list) {
      files.push_back(
          {{"name", f.name}, {"bytes", f.size_bytes}, {"records", f.records}, {"xxh3", f.xxh3}});
    }
    j[key] = std::move(files);
  }
  j["manifest"] = OrderedJson::parse(manifest.ToJson());
  return j.dump(1) + "\n";
}

Result<TaskReceipt> TaskReceipt::Parse(std::string_view json, std::string_view origin) {
  TaskReceipt r;
  std::string manifest_json;
  try {
    OrderedJson j = OrderedJson::parse(json);
    if (j.at("version").get<int>() != 1) {
      return Corruption(std::string(origin) + ": unknown receipt version");
    }
    r.task_index = j.at("task_index").get<uint32_t>();
    r.task_count = j.at("task_count").get<uint32_t>();
    r.plan_checksum = j.at("plan_xxh3").get<std::string>();
    r.options_json = j.at("options").dump();
    for (const auto& f : j.at("inputs")) {
      r.inputs.push_back({f.at("path").get<std::string>(), f.at("bytes").get<uint64_t>(),
                          f.at("xxh3").get<std::string>()});
    }
    for (auto [key, list] :
         {std::pair{"tfrecord", &r.tfrecord}, std::pair{"webdataset", &r.webdataset}}) {
      if (!j.contains(key)) continue;
      for (const auto& f : j.at(key)) {
        list->push_back({f.at("name").get<std::string>(), f.at("bytes").get<uint64_t>(),
                         f.at("records").get<uint64_t>(), f.at("xxh3").get<std::string>()});
      }
    }
    manifest_json = j.at("manifest").dump();
  } catch (const std::exception& e) {
    return Corruption(std::string(origin) + ": not a stoker task receipt: " + e.what());
  }
  STOKER_ASSIGN_OR_RETURN(r.manifest, Manifest::Parse(manifest_json, origin));
  return r;
}

std::string ReceiptOptionsThatDiffer(const std::string& a_json, const std::string& a,
                                     const std::string& b_json, const std::string& b) {
  const nlohmann::json x = nlohmann::json::parse(a_json, nullptr, false);
  const nlohmann::json y = nlohmann::json::parse(b_json, nullptr, false);
  if (!x.is_object() || !y.is_object()) return a_json + " in " + a + ", " + b_json + " in " + b;
  std::string out;
  auto add = [&](const std::string& key) {
    const std::string u = x.contains(key) ? x[key].dump() : "none";
    const std::string v = y.contains(key) ? y[key].dump() : "none";
    if (u == v) return;
    out += (out.empty() ? "" : ", ") + key + " (" + u + " in " + a + ", " + v + " in " + b + ")";
  };
  for (const auto& [key, value] : x.items()) add(key);
  for (const auto& [key, value] : y.items()) {
    if (!x.contains(key)) add(key);
  }
  return out;
}

}  // namespace stoker
