#include "ingest/task_plan.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "common/file_util.h"
#include "common/hash.h"
#include "common/uri.h"
#include "ingest/pack_records.h"
#include "records/record_store.h"

namespace stoker {
namespace {

using OrderedJson = nlohmann::ordered_json;

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : " ") + x;
  return s;
}

// OK if the planned input `key` of `planned` bytes has that size `now`; else the error that it is
// gone (`now` kNotFound) or changed size since the plan, or `now`'s other error.
Status CheckPlannedInput(const std::string& key, uint64_t planned, const Result<uint64_t>& now) {
  if (!now.ok() && now.status().code() == StatusCode::kNotFound) {
    return FailedPrecondition(key + ": planned input (" + std::string(kTaskPlanFileName) +
                              ") is gone");
  }
  STOKER_RETURN_IF_ERROR(now.status());
  if (*now == planned) return Status::OK();
  return FailedPrecondition(key + ": planned input changed size since the plan (" +
                            std::to_string(planned) + " bytes planned, " + std::to_string(*now) +
                            " now)");
}

}  // namespace

std::string TaskPlan::ToJson() const {
  OrderedJson j;
  j["version"] = 1;
  j["task_count"] = task_count;
  j["arguments"] = arguments;
  j["input_format"] = input_format;
  if (!output_format.empty()) j["output_format"] = output_format;
  j["total_bytes"] = total_bytes();
  OrderedJson list = OrderedJson::array();
  for (const PlannedInput& f : files) {
    OrderedJson entry = {{"path", f.key}, {"bytes", f.size_bytes}};
    if (!f.member.empty()) entry["member"] = f.member;
    if (!f.kind.empty()) entry["kind"] = f.kind;
    if (f.object_bytes != 0) entry["object_bytes"] = f.object_bytes;
    if (!f.hashes.empty()) {
      OrderedJson h = OrderedJson::object();
      for (const auto& [algo, hex] : f.hashes) h[algo] = hex;
      entry["hashes"] = std::move(h);
    }
    list.push_back(std::move(entry));
  }
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
    plan.output_format = j.value("output_format", std::string());
    for (const auto& f : j.at("files")) {
      PlannedInput p;
      p.key = f.at("path").get<std::string>();
      p.size_bytes = f.at("bytes").get<uint64_t>();
      p.member = f.value("member", std::string());
      p.kind = f.value("kind", std::string());
      p.object_bytes = f.value("object_bytes", uint64_t{0});
      if (f.contains("hashes")) {
        for (const auto& [algo, hex] : f.at("hashes").items()) {
          p.hashes.emplace_back(algo, hex.get<std::string>());
        }
      }
      plan.files.push_back(std::move(p));
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
  TaskSlice slice = SliceForTask(sized, index, task_count);
  // Moves boundary b (between files b-1 and b) past the rest of the sample at b-1: every task
  // moves the boundary it shares with its neighbour the same way, so the slices still tile.
  auto align = [&](size_t b) {
    while (b > 0 && b < files.size() && !files[b].member.empty() &&
           WebDatasetSampleKey(files[b].member) == WebDatasetSampleKey(files[b - 1].member)) {
      ++b;
    }
    return b;
  };
  slice.first = align(slice.first);
  slice.last = std::max(slice.first, align(slice.last));
  return slice;
}

std::string PlannedInputKey(const InputFile& file) {
  if (file.kind == InputKind::kRecords && file.shard.part >= 0) {
    return file.path + "#" + std::to_string(file.shard.part);
  }
  return file.path;
}

bool TaskPlan::has_kinds() const {
  return std::ranges::none_of(files, [](const PlannedInput& f) { return f.kind.empty(); });
}

std::vector<PlannedInput> PlanFiles(const std::vector<InputFile>& files) {
  std::vector<PlannedInput> planned;
  for (const InputFile& f : files) {
    PlannedInput p;
    p.key = PlannedInputKey(f);
    p.size_bytes = f.size_bytes;
    switch (f.kind) {
      case InputKind::kJsonl:
        p.kind = "jsonl";
        break;
      case InputKind::kText:
        p.kind = "text";
        break;
      case InputKind::kRecords:
        p.kind = std::string(RecordFormatName(f.shard.format));
        if (f.shard.object_bytes != f.size_bytes) p.object_bytes = f.shard.object_bytes;
        p.hashes = f.shard.hashes;
        break;
    }
    planned.push_back(std::move(p));
  }
  return planned;
}

Result<std::vector<InputFile>> PlannedInputFiles(const TaskPlan& plan, TaskSlice slice) {
  std::map<std::string, RecordStore> stores;  // one per scheme://host: a backend each, not per file
  auto store_for = [&](const std::string& uri) -> Result<RecordStore> {
    if (!IsRemoteRecordUri(uri)) return RecordStore();
    const size_t slash = uri.find('/', uri.find("://") + 3);
    const std::string root = uri.substr(0, slash);
    auto it = stores.find(root);
    if (it == stores.end()) {
      STOKER_ASSIGN_OR_RETURN(RecordStore s, RecordStore::For(uri));
      it = stores.emplace(root, std::move(s)).first;
    }
    return it->second;
  };
  std::map<std::string, Result<uint64_t>> checked;  // path -> size now, for the task's own files
  std::vector<InputFile> files;
  files.reserve(plan.files.size());
  for (size_t i = 0; i < plan.files.size(); ++i) {
    const PlannedInput& p = plan.files[i];
    InputFile f;
    f.path = p.key;
    f.size_bytes = p.size_bytes;
    STOKER_ASSIGN_OR_RETURN(f.shard.store, store_for(p.key));
    if (p.kind == "jsonl" || p.kind == "text") {
      f.kind = p.kind == "jsonl" ? InputKind::kJsonl : InputKind::kText;
    } else {
      f.kind = InputKind::kRecords;
      STOKER_ASSIGN_OR_RETURN(f.shard.format, ParseRecordFormat(p.kind));
      const size_t hash = p.key.rfind('#');
      if (f.shard.format == RecordFormat::kParquet && hash != std::string::npos) {
        f.path = p.key.substr(0, hash);
        f.shard.part = std::stoll(p.key.substr(hash + 1));
      }
      f.shard.hashes = p.hashes;
    }
    f.shard.path = f.path;
    f.shard.size_bytes = p.size_bytes;
    f.shard.object_bytes = p.object_bytes != 0 ? p.object_bytes : p.size_bytes;
    if (i >= slice.first && i < slice.last) {
      // The task's own files: still there with their planned size.
      auto it = checked.find(f.path);
      if (it == checked.end()) it = checked.emplace(f.path, f.shard.store.Size(f.path)).first;
      STOKER_RETURN_IF_ERROR(CheckPlannedInput(p.key, f.shard.object_bytes, it->second));
      if (f.shard.format == RecordFormat::kLitData && f.shard.store.remote()) {
        STOKER_ASSIGN_OR_RETURN(std::string index,
                                f.shard.store.ReadAll(JoinUri(DirName(f.path), "index.json")));
        f.shard.index_text = std::make_shared<const std::string>(std::move(index));
      }
    }
    files.push_back(std::move(f));
  }
  return files;
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
    // First writer wins: of several tasks that found no plan and listed at once, one records
    // its list; the others' writes fail and they go on with the recorded one (read back).
    Status written = backend.WriteIfAbsent(uri, fresh.ToJson());
    if (!written.ok() && written.code() != StatusCode::kAlreadyExists) return written;
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
  if (r.output_format != fresh.output_format) {
    auto name = [](const std::string& f) { return f.empty() ? std::string("stoker") : f; };
    return differ("--format", name(r.output_format), name(fresh.output_format));
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
    STOKER_RETURN_IF_ERROR(CheckPlannedInput(
        p.key, p.size_bytes,
        it == at.end() ? Result<uint64_t>(NotFound(p.key)) : expanded[it->second].size_bytes));
    files.push_back(std::move(expanded[it->second]));
  }
  return files;
}

}  // namespace stoker
