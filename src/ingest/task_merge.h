// `stoker merge OUTPUT` of a task-split pack (ingest/pack_task.h): reads the plan
// (OUTPUT/inputs.json) and every task's receipt (OUTPUT/tasks/NNNNN.json), checks them, and writes
// OUTPUT's length index and manifest naming the tasks' shards where they are (no shard is copied
// or rewritten). Checks, each naming the task at fault: every task 0..N-1 has a receipt; the
// receipt is for this plan, this task and this count; its inputs are its slice of the plan; its
// tokenizer and options are task 0's; its shards exist with the recorded sizes. On s3:// the
// receipts and the shards' .idx are read, the .bin sizes come from one listing, and the length
// index then the manifest are uploaded. Free functions; thread-safe.
#pragma once

#include <string>

#include "format/manifest.h"
#include "stoker/status.h"

namespace stoker {

// True when `dir` (local or s3://) holds a task plan: the output of a task-split pack.
Result<bool> IsTaskSplitOutput(const std::string& dir);

// Merges the tasks at `output` (see above) and returns the manifest written. Rewriting it is
// harmless: the merge of the same receipts is the same bytes. Errors: kNotFound (no plan),
// kFailedPrecondition (a task missing or mismatched, a shard missing or of the wrong size).
Result<Manifest> MergeTasks(const std::string& output);

}  // namespace stoker
