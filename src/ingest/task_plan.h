// The input plan of a task-split pack (`stoker pack --task-index I --task-count N`, N > 1): the
// expanded input list, taken once and recorded as OUTPUT/inputs.json, so that every task — and
// every rerun of a task — splits the same list the same way even if files appear meanwhile. A
// task's inputs are a pure function of (the plan, its index, the count): SliceForTask's
// contiguous, byte-balanced slice. Plain values and free functions; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ingest/input_plan.h"
#include "stoker/status.h"
#include "storage/backend.h"

namespace stoker {

inline constexpr const char* kTaskPlanFileName = "inputs.json";
inline constexpr const char* kTaskReceiptDir = "tasks";

struct PlannedInput {
  std::string key;  // the input's path (URI for remote shards), "#N" appended for row group N
  uint64_t size_bytes = 0;
};

struct TaskPlan {
  uint32_t task_count = 1;
  std::vector<std::string> arguments;  // the INPUT arguments as given
  std::string input_format = "auto";
  std::vector<PlannedInput> files;  // in pack order
  std::string checksum;             // XXH3 of the recorded inputs.json text (set on load)

  std::string ToJson() const;
  static Result<TaskPlan> Parse(std::string_view json, std::string_view origin);
  uint64_t total_bytes() const;
  // The files task `index` packs: SliceForTask's range.
  TaskSlice Slice(uint32_t index) const;
};

// The key that identifies an expanded input in a plan.
std::string PlannedInputKey(const InputFile& file);

// The planned form of expanded `files` (ExpandPackInputs' list).
std::vector<PlannedInput> PlanFiles(const std::vector<InputFile>& files);

// `root`/inputs.json if it is there (its checksum set), else kNotFound.
Result<TaskPlan> ReadTaskPlan(const storage::Backend& backend, const std::string& root);

// The recorded plan at `root`; when there is none, `want` with the files `list_files` gives,
// written there (atomically: a file is renamed into place, an object is one PUT) and read back.
// kFailedPrecondition when the recorded plan is for other arguments, input format or task count
// than `want` (it names both).
Result<TaskPlan> ReadOrWriteTaskPlan(
    const storage::Backend& backend, const std::string& root, TaskPlan want,
    const std::function<Result<std::vector<PlannedInput>>()>& list_files);

// Restricts a fresh expansion of the inputs to the plan, in plan order: files that appeared since
// are left out; a planned file that is gone or changed size is kFailedPrecondition (naming it).
Result<std::vector<InputFile>> ApplyTaskPlan(std::vector<InputFile> expanded, const TaskPlan& plan);

// The job's root for an -o OUTPUT: a local path (file:// stripped) or the s3:// URI;
// kInvalidArgument for http(s):// (read-only).
Result<std::string> TaskOutputRoot(const std::string& output);

// "tasks/00003.json" under `root`.
std::string TaskReceiptUri(const std::string& root, uint32_t task_index);

}  // namespace stoker
