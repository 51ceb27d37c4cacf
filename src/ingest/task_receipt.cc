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
  if (!tfrecord.empty()) {
    OrderedJson files = OrderedJson::array();
    for (const RecordFileInfo& f : tfrecord) {
      files.push_back(
          {{"name", f.name}, {"bytes", f.size_bytes}, {"records", f.records}, {"xxh3", f.xxh3}});
    }
    j["tfrecord"] = std::move(files);
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
    if (j.contains("tfrecord")) {
      for (const auto& f : j.at("tfrecord")) {
        r.tfrecord.push_back({f.at("name").get<std::string>(), f.at("bytes").get<uint64_t>(),
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

}  // namespace stoker
