// The receipt of one task of a task-split pack: OUTPUT/tasks/NNNNN.json, written after the task's
// shards, last and atomically (a file renamed into place, or one PUT). It records what the task
// read (its inputs, their sizes and XXH3), how (the tokenizer and the options that change the
// output) and what it wrote (its shards with their sizes and XXH3, its counters). A task is
// finished exactly when its receipt exists; `stoker merge OUTPUT` checks every receipt against
// the plan (ingest/task_plan.h) and the shards. Plain values; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "format/manifest.h"
#include "records/record_file_sink.h"
#include "stoker/status.h"

namespace stoker {

struct ReceiptInput {
  std::string key;  // as in the plan (PlannedInputKey)
  uint64_t size_bytes = 0;
  std::string xxh3;  // of the file; "" for remote inputs and Parquet row groups (not read twice)
};

struct TaskReceipt {
  uint32_t task_index = 0;
  uint32_t task_count = 1;
  std::string plan_checksum;  // TaskPlan::checksum of the plan the task split
  // The tokenizer and the options that decide the output bytes, as one canonical JSON object
  // (two tasks of one job must agree on it, and a rerun with other options must not be taken
  // for finished).
  std::string options_json;
  std::vector<ReceiptInput> inputs;
  Manifest manifest;  // the task's shards (prefixes relative to OUTPUT), tokenizer, counters
  // --format tfrecord: the task's TFRecord files under OUTPUT/tfrecord.
  std::vector<RecordFileInfo> tfrecord;
  // --format webdataset: the task's tar shards under OUTPUT (`manifest` then has no shards; its
  // counters hold files_read and files_skipped).
  std::vector<RecordFileInfo> webdataset;

  std::string ToJson() const;
  static Result<TaskReceipt> Parse(std::string_view json, std::string_view origin);
};

// The keys of two options_json objects whose values differ, each with both values:
// "shard_size_bytes (1024 in A, 2048 in B)", joined by ", ". `a` and `b` name the two sides.
// Falls back to both objects in full when either is not a JSON object.
std::string ReceiptOptionsThatDiffer(const std::string& a_json, const std::string& a,
                                     const std::string& b_json, const std::string& b);

}  // namespace stoker
