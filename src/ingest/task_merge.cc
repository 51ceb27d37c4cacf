#include "ingest/task_merge.h"

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "common/file_util.h"
#include "common/temp_dir.h"
#include "common/uri.h"
#include "format/dataset_length_index.h"
#include "ingest/pack_records.h"
#include "ingest/remote_tools.h"
#include "ingest/task_plan.h"
#include "ingest/task_receipt.h"
#include "records/record_store.h"
#include "storage/open_backend.h"

namespace stoker {
namespace {

std::string TaskName(uint32_t index, uint32_t count) {
  return "task " + std::to_string(index) + " of " + std::to_string(count);
}

// "3, 7, 12" (the first 10, then a count).
std::string ListTasks(const std::vector<uint32_t>& tasks) {
  std::string s;
  for (size_t i = 0; i < tasks.size() && i < 10; ++i) {
    s += (i ? ", " : "") + std::to_string(tasks[i]);
  }
  if (tasks.size() > 10) s += " and " + std::to_string(tasks.size() - 10) + " more";
  return s;
}

// Checks receipt `r` of task `index` against the plan and task 0's receipt.
Status CheckReceipt(const TaskReceipt& r, uint32_t index, const TaskPlan& plan,
                    const TaskReceipt& first, const std::string& uri) {
  const std::string task = TaskName(index, plan.task_count);
  if (r.task_index != index || r.task_count != plan.task_count) {
    return FailedPrecondition("cannot merge: " + uri + " is the receipt of " +
                              TaskName(r.task_index, r.task_count) + ", not of " + task);
  }
  if (r.plan_checksum != plan.checksum) {
    return FailedPrecondition("cannot merge: " + task + " split another input plan (" +
                              r.plan_checksum + ", the recorded one is " + plan.checksum +
                              "): rerun it");
  }
  const TaskSlice slice = plan.Slice(index);
  bool same = r.inputs.size() == slice.last - slice.first;
  for (size_t i = 0; same && i < r.inputs.size(); ++i) {
    const PlannedInput& p = plan.files[slice.first + i];
    same = r.inputs[i].key == p.key && r.inputs[i].size_bytes == p.size_bytes;
  }
  if (!same) {
    return FailedPrecondition("cannot merge: the inputs in " + uri + " are not " + task +
                              "'s slice of the plan: rerun it");
  }
  if (r.options_json != first.options_json) {
    return FailedPrecondition(
        "cannot merge: " + task + " was packed with other options than task 0: " +
        ReceiptOptionsThatDiffer(r.options_json, task, first.options_json, "task 0") +
        "; rerun it with the job's options and --overwrite");
  }
  return Status::OK();
}

// How to rerun the missing tasks: "with --task-index 2 --task-count 4" for one; for several, one
// command per task and the Slurm array that reruns them all (its indices numbered from 1, as the
// recipe's --array=1-N).
std::string RerunCommands(const std::vector<uint32_t>& missing, uint32_t n) {
  const std::string count = " --task-count " + std::to_string(n);
  if (missing.size() == 1) return "with --task-index " + std::to_string(missing[0]) + count;
  std::string each, array;
  for (size_t i = 0; i < missing.size() && i < 10; ++i) {
    each += std::string(i ? ", " : "") + "--task-index " + std::to_string(missing[i]) + count;
  }
  if (missing.size() > 10) each += " and " + std::to_string(missing.size() - 10) + " more";
  // Runs of consecutive tasks as ranges: 2,4-9,12.
  for (size_t i = 0; i < missing.size();) {
    size_t j = i;
    while (j + 1 < missing.size() && missing[j + 1] == missing[j] + 1) ++j;
    array += std::string(i ? "," : "") + std::to_string(missing[i] + 1);
    if (j > i) array += "-" + std::to_string(missing[j] + 1);
    i = j + 1;
  }
  return "each of them (" + each + "; as a Slurm array numbered from 1: sbatch --array=" + array +
         ")";
}

}  // namespace

Result<bool> IsTaskSplitOutput(const std::string& dir) {
  STOKER_ASSIGN_OR_RETURN(std::string root, TaskOutputRoot(dir));
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<storage::Backend> backend,
                          storage::OpenBackendForUri(root));
  Result<storage::ObjectInfo> plan = backend->Stat(JoinUri(root, kTaskPlanFileName));
  if (plan.ok()) return true;
  if (plan.status().code() == StatusCode::kNotFound) return false;
  return plan.status();
}

Result<Manifest> MergeTasks(const std::string& output) {
  STOKER_ASSIGN_OR_RETURN(std::string root, TaskOutputRoot(output));
  const bool remote = IsRemoteRecordUri(root);
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<storage::Backend> backend,
                          storage::OpenBackendForUri(root));
  Result<TaskPlan> read = ReadTaskPlan(*backend, root);
  if (!read.ok() && read.status().code() == StatusCode::kNotFound) {
    return NotFound(output + ": no " + std::string(kTaskPlanFileName) +
                    ": not the output of a task-split pack");
  }
  STOKER_RETURN_IF_ERROR(read.status());
  const TaskPlan& plan = *read;
  const uint32_t n = plan.task_count;

  // One listing finds the receipts; those there are read on 8 threads.
  STOKER_ASSIGN_OR_RETURN(std::vector<storage::ObjectInfo> listed,
                          backend->List(JoinUri(root, kTaskReceiptDir) + "/"));
  std::set<std::string> present;
  for (const storage::ObjectInfo& o : listed) present.insert(o.uri);
  std::vector<uint32_t> missing;
  for (uint32_t t = 0; t < n; ++t) {
    if (!present.count(TaskReceiptUri(root, t))) missing.push_back(t);
  }
  if (!missing.empty()) {
    return FailedPrecondition(
        "cannot merge " + output + ": " + std::string(missing.size() == 1 ? "task " : "tasks ") +
        ListTasks(missing) + " of " + std::to_string(n) + " " +
        (missing.size() == 1 ? "has" : "have") +
        " no receipt (not run, still running, or killed): rerun " + RerunCommands(missing, n));
  }
  std::vector<std::optional<TaskReceipt>> receipts(n);
  STOKER_RETURN_IF_ERROR(ParallelFor(n, [&](size_t t) -> Status {
    const std::string uri = TaskReceiptUri(root, static_cast<uint32_t>(t));
    STOKER_ASSIGN_OR_RETURN(std::string text, storage::ReadAll(*backend, uri));
    STOKER_ASSIGN_OR_RETURN(TaskReceipt r, TaskReceipt::Parse(text, uri));
    receipts[t] = std::move(r);
    return Status::OK();
  }));

  Manifest merged;
  const TaskReceipt& first = *receipts[0];
  merged.tokenizer = first.manifest.tokenizer;
  merged.dtype = first.manifest.dtype;
  for (uint32_t t = 0; t < n; ++t) {
    const TaskReceipt& r = *receipts[t];
    STOKER_RETURN_IF_ERROR(CheckReceipt(r, t, plan, first, TaskReceiptUri(root, t)));
    for (const ShardInfo& s : r.manifest.shards) merged.shards.push_back(s);
    for (const auto& [name, value] : r.manifest.counters) {
      if (name != "task_index" && name != "task_count") merged.counters[name] += value;
    }
  }
  merged.counters["merged_parts"] = n;

  // Every shard is there with its recorded size: one listing.
  std::map<std::string, uint64_t> sizes;
  auto list = [&](const std::string& prefix) -> Status {
    STOKER_ASSIGN_OR_RETURN(listed, backend->List(JoinUri(root, prefix)));
    for (const storage::ObjectInfo& o : listed) sizes[o.uri] = o.size_bytes;
    return Status::OK();
  };
  // OK if `uri`, one of task `t`'s outputs (`what`), was listed with its recorded size.
  auto check = [&](uint32_t t, const char* what, const std::string& uri, uint64_t bytes) {
    auto it = sizes.find(uri);
    if (it != sizes.end() && it->second == bytes) return Status::OK();
    return FailedPrecondition("cannot merge: " + TaskName(t, n) + "'s " + what + " " + uri +
                              (it == sizes.end()
                                   ? " is missing"
                                   : " has " + std::to_string(it->second) +
                                         " bytes, its receipt says " + std::to_string(bytes)) +
                              ": rerun the task");
  };
  // Writes a listing of the job: durably in place when local.
  auto publish = [&](const std::string& uri, const std::string& json) {
    return remote ? storage::WriteAll(*backend, uri, json) : WriteFileAtomically(uri, json);
  };
  STOKER_RETURN_IF_ERROR(list("part-"));
  for (uint32_t t = 0; t < n; ++t) {
    for (const ShardInfo& s : receipts[t]->manifest.shards) {
      STOKER_RETURN_IF_ERROR(check(t, "shard", JoinUri(root, s.prefix + ".bin"), s.bin_bytes));
      STOKER_RETURN_IF_ERROR(check(t, "shard", JoinUri(root, s.prefix + ".idx"), s.idx_bytes));
    }
  }

  const std::string format =
      nlohmann::json::parse(first.options_json).value("format", std::string("stoker"));
  if (format == "webdataset") {
    // The tasks' tar shards, listed in the job's records.json (no token shards, no manifest).
    std::vector<RecordFileInfo> tars;
    for (uint32_t t = 0; t < n; ++t) {
      for (const RecordFileInfo& f : receipts[t]->webdataset) {
        STOKER_RETURN_IF_ERROR(check(t, "tar shard", JoinUri(root, f.name), f.size_bytes));
        tars.push_back(f);
      }
    }
    STOKER_RETURN_IF_ERROR(publish(JoinUri(root, kRecordsManifestName),
                                   WebDatasetManifestJson(tars, merged.counters["files_skipped"])));
    return merged;
  }
  // --format tfrecord: the tasks' TFRecord files, listed in the job's tfrecord/records.json.
  const bool tfrecord = format == "tfrecord";
  std::vector<RecordFileInfo> tf_files;
  if (tfrecord) {
    STOKER_RETURN_IF_ERROR(list("tfrecord/part-"));
    for (uint32_t t = 0; t < n; ++t) {
      for (const RecordFileInfo& f : receipts[t]->tfrecord) {
        STOKER_RETURN_IF_ERROR(
            check(t, "TFRecord file", JoinUri(root, "tfrecord/" + f.name), f.size_bytes));
        tf_files.push_back(f);
      }
    }
  }
  const std::string records_json = TfRecordManifestJson(merged, tf_files);
  const std::string records_uri = JoinUri(root, std::string("tfrecord/") + kRecordsManifestName);

  if (!remote) {
    if (tfrecord) {
      STOKER_RETURN_IF_ERROR(MakeDirectories(JoinPath(root, "tfrecord")));
      STOKER_RETURN_IF_ERROR(publish(records_uri, records_json));
    }
    STOKER_ASSIGN_OR_RETURN(merged.length_index, BuildDatasetLengthIndex(root, merged));
    STOKER_RETURN_IF_ERROR(WriteManifest(root, merged));
    return merged;
  }
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<TempDir> staging, TempDir::Create("stoker-merge-"));
  const std::string mirror = staging->Join("dataset");
  STOKER_RETURN_IF_ERROR(MirrorShardMetadata(*backend, root, merged.shards, mirror));
  STOKER_ASSIGN_OR_RETURN(merged.length_index, BuildDatasetLengthIndex(mirror, merged));
  STOKER_RETURN_IF_ERROR(WriteManifest(mirror, merged));
  if (tfrecord) STOKER_RETURN_IF_ERROR(publish(records_uri, records_json));
  STOKER_RETURN_IF_ERROR(UploadIndexAndManifest(*backend, mirror, merged, root));
  return merged;
}

}  // namespace stoker
