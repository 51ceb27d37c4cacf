// Input planning for `stoker pack`: expands the INPUT arguments into an ordered list of files and
// gives each task of a multi-task job its deterministic, contiguous slice of that list.
//
// Order: the arguments in command-line order; a directory contributes its regular files, walked
// recursively, sorted bytewise by path. Hidden names (starting with '.') are skipped, symbolic
// links to files are followed, links to directories are not (no cycles). Plain functions;
// thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "records/record_source.h"
#include "stoker/status.h"

namespace stoker {

enum class InputKind {
  kJsonl,    // one document per line (name ends .jsonl or .ndjson, before any .gz/.zst)
  kText,     // the whole (decompressed) file is one document
  kRecords,  // a record shard (WebDataset, TFRecord, MDS): one document per record
};

struct InputFile {
  std::string path;
  uint64_t size_bytes = 0;  // on disk (compressed size for .gz/.zst)
  InputKind kind = InputKind::kText;
  RecordShard shard;  // kRecords: the shard to open (its format, digests)
};

InputKind InputKindFromName(std::string_view path);

// Expands files and directories into the ordered input list. kNotFound for a missing input;
// kInvalidArgument for something that is neither a file nor a directory; kIOError for a directory
// that cannot be listed. Errors name the path.
Result<std::vector<InputFile>> ExpandInputs(const std::vector<std::string>& inputs);

// The half-open range [first, last) of `files` that task `task_index` of `task_count` packs.
// Ranges are contiguous and in order, so concatenating the tasks' outputs in task order gives the
// single-task document order; they are balanced by bytes on disk (a file is never split).
struct TaskSlice {
  size_t first = 0;
  size_t last = 0;
};
TaskSlice SliceForTask(const std::vector<InputFile>& files, uint32_t task_index,
                       uint32_t task_count);

struct TaskAssignment {
  uint32_t index = 0;
  uint32_t count = 1;
  std::string source;  // "default", "SLURM_ARRAY_TASK_ID", "RANK"
};

// The task assignment from the environment: SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_COUNT (the ID
// is taken relative to SLURM_ARRAY_TASK_MIN, so arrays numbered from 1 work), else RANK /
// WORLD_SIZE, else task 0 of 1. kInvalidArgument for malformed or out-of-range values.
Result<TaskAssignment> TaskFromEnvironment();

}  // namespace stoker
