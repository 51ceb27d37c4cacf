#include "ingest/task_plan.h"

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "common/hash.h"
#include "common/uri.h"

namespace stoker {
namespace {

using OrderedJson = nlohmann::ordered_json;

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : " ") + x;
  return s;
}

}  // namespace

std::string TaskPlan::ToJson() const {
  OrderedJson j;
  j["version"] = 1;
  j["task_count"] = task_count;
  j["arguments"] = arguments;
  j["input_format"] = input_format;
  j["total_bytes"] = total_bytes();
  OrderedJson list = OrderedJson::array();
  for (const PlannedInput& f : files) list.push_back({{"path", f.key}, {"bytes", f.size_bytes}});
  j["files"] = std::move(list);
  return j.dump(1) + "\n";
}

Result<TaskPlan> TaskPlan::Parse(std::string_view json, std::string_view origin) {
  TaskPlan plan;
  try {
    OrderedJson j = OrderedJson::parse(json);
    if (j.at("version").get<int>() != 1) {
      return Corruption(std::string(origin) + ": unknown plan version");
    }
    plan.task_count = j.at("task_count").get<uint32_t>();
    plan.arguments = j.at("arguments").get<std::vector<std::string>>();
    plan.input_format = j.at("input_format").get<std::string>();
    for (const auto& f : j.at("files")) {
      plan.files.push_back({f.at("path").get<std::string>(), f.at("bytes").get<uint64_t>()});
    }
  } catch (const std::exception& e) {
    return Corruption(std::string(origin) + ": not a stoker input plan: " + e.what());
  }
  if (plan.task_count == 0) return Corruption(std::string(origin) + ": task_count is 0");
  plan.checksum = Xxh3Hex(Xxh3(json.data(), json.size()));
  return plan;
}

uint64_t TaskPlan::total_bytes() const {
  uint64_t total = 0;
  for (const PlannedInput& f : files) total += f.size_bytes;
  return total;
}

TaskSlice TaskPlan::Slice(uint32_t index) const {
  std::vector<InputFile> sized(files.size());
  for (size_t i = 0; i < files.size(); ++i) sized[i].size_bytes = files[i].size_bytes;
  return SliceForTask(sized, index, task_count);
}

std::string PlannedInputKey(const InputFile& file) {
  if (file.kind == InputKind::kRecords && file.shard.part >= 0) {
    return file.path + "#" + std::to_string(file.shard.part);
  }
  return file.path;
}

std::vector<PlannedInput> PlanFiles(const std::vector<InputFile>& files) {
  std::vector<PlannedInput> planned;
  for (const InputFile& f : files) planned.push_back({PlannedInputKey(f), f.size_bytes});
  return planned;
}

Result<std::string> TaskOutputRoot(const std::string& output) {
  STOKER_ASSIGN_OR_RETURN(ParsedUri parsed, ParseUri(output));
  if (parsed.kind == UriKind::kFile) return parsed.path;
  if (parsed.kind == UriKind::kHttp) {
    return InvalidArgument(output +
                           ": http:// and https:// are read-only; write to a local "
                           "path or s3://bucket/prefix");
  }
  return output;
}

std::string TaskReceiptUri(const std::string& root, uint32_t task_index) {
  char name[32];
  std::snprintf(name, sizeof(name), "%05u.json", task_index);
  return JoinUri(JoinUri(root, kTaskReceiptDir), name);
}

Result<TaskPlan> ReadTaskPlan(const storage::Backend& backend, const std::string& root) {
  const std::string uri = JoinUri(root, kTaskPlanFileName);
  STOKER_ASSIGN_OR_RETURN(std::string text, storage::ReadAll(backend, uri));
  return TaskPlan::Parse(text, uri);
}

Result<TaskPlan> ReadOrWriteTaskPlan(
    const storage::Backend& backend, const std::string& root, TaskPlan fresh,
    const std::function<Result<std::vector<PlannedInput>>()>& list_files) {
  const std::string uri = JoinUri(root, kTaskPlanFileName);
  Result<TaskPlan> recorded = ReadTaskPlan(backend, root);
  if (!recorded.ok()) {
    if (recorded.status().code() != StatusCode::kNotFound) return recorded.status();
    STOKER_ASSIGN_OR_RETURN(fresh.files, list_files());
    STOKER_RETURN_IF_ERROR(storage::WriteAll(backend, uri, fresh.ToJson()));
    // Read back: with two first tasks racing, the later write is the plan both go on with (a
    // task that split the other list is found out by its receipt: merge checks every one).
    recorded = ReadTaskPlan(backend, root);
    STOKER_RETURN_IF_ERROR(recorded.status());
  }
  const TaskPlan& r = *recorded;
  auto differ = [&](const std::string& what, const std::string& was, const std::string& now) {
    return FailedPrecondition(uri + " records the plan of a job with " + what + " " + was +
                              ", not " + now +
                              ": use another output, or delete the job's output to start over");
  };
  if (r.task_count != fresh.task_count) {
    return differ("task count", std::to_string(r.task_count), std::to_string(fresh.task_count));
  }
  if (r.arguments != fresh.arguments) {
    return differ("inputs", "'" + Join(r.arguments) + "'", "'" + Join(fresh.arguments) + "'");
  }
  if (r.input_format != fresh.input_format) {
    return differ("--input-format", r.input_format, fresh.input_format);
  }
  return recorded;
}

Result<std::vector<InputFile>> ApplyTaskPlan(std::vector<InputFile> expanded,
                                             const TaskPlan& plan) {
  std::map<std::string, size_t> at;
  for (size_t i = 0; i < expanded.size(); ++i) at.emplace(PlannedInputKey(expanded[i]), i);
  std::vector<InputFile> files;
  files.reserve(plan.files.size());
  for (const PlannedInput& p : plan.files) {
    auto it = at.find(p.key);
    if (it == at.end()) {
      return FailedPrecondition(p.key + ": planned input (" + std::string(kTaskPlanFileName) +
                                ") is gone");
    }
    InputFile& f = expanded[it->second];
    if (f.size_bytes != p.size_bytes) {
      return FailedPrecondition(p.key + ": planned input changed size since the plan (" +
                                std::to_string(p.size_bytes) + " bytes planned, " +
                                std::to_string(f.size_bytes) + " now)");
    }
    files.push_back(std::move(f));
  }
  return files;
}

}  // namespace stoker
