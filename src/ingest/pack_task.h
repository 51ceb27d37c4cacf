// One task of a task-split pack (`stoker pack -o OUTPUT --task-index I --task-count N`, N > 1, or
// the Slurm/torchrun environment): every task writes into the same OUTPUT —
//   OUTPUT/inputs.json             the plan (ingest/task_plan.h), written by the first task or by
//                                  `stoker pack --list`, read by every later one
//   OUTPUT/part-IIIII-SSSSS.*      task I's shards
//   OUTPUT/tasks/IIIII.json        task I's receipt (ingest/task_receipt.h), written last
//   OUTPUT/manifest.json           written by `stoker merge OUTPUT` (ingest/task_merge.h)
// A task whose receipt matches (same plan, same tokenizer and options, its shards present with
// the recorded sizes) does nothing. Otherwise it removes its receipt, the merged manifest (the
// dataset is no longer complete) and its own stale shards, packs its slice, and writes the
// receipt after the shards. A task killed at any point therefore leaves no receipt, and shards
// without a receipt are never taken for finished work (the rerun overwrites them). On s3:// the
// task packs into a staging directory, uploads its shards, then PUTs the receipt. Free
// functions; thread-safe.
#pragma once

#include <functional>

#include "ingest/pack_args.h"
#include "ingest/pack_run.h"
#include "ingest/task_plan.h"
#include "stoker/status.h"

namespace stoker {

// True when `args` describe one task of a task-split pack: a task count above 1, from the flags
// or the environment (TaskFromEnvironment).
Result<bool> IsTaskSplit(const PackArgs& args);

// The job's plan for `args` (task count from the flags or the environment, >= 1): the recorded
// OUTPUT/inputs.json, or a fresh expansion of the inputs written there. `stoker pack --list`.
Result<TaskPlan> PlanPackTasks(const PackArgs& args);

// Runs (or skips) one task as described above. Errors as RunPackArgs; kFailedPrecondition when
// the recorded plan is for another job, or the task's receipt is from other options (unless
// args.overwrite, which redoes the task).
Result<PackRunResult> RunPackTask(const PackArgs& args,
                                  std::function<void(const PackProgress&)> on_progress);

}  // namespace stoker
