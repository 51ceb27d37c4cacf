// `stoker trace --stream` (docs/lineage.md): the pieces of run steps A..B of the streaming path,
// every rank (each rank's own planner, as `stoker explain --stream` opens it, asked step after
// step), held in memory with the names they use, for a TraceTable. Not thread-safe: one command.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "plan_flags.h"
#include "stoker/status.h"
#include "stream_flags.h"
#include "trace_table.h"

namespace stoker::cli {

struct StreamTrace {
  std::vector<std::string> names;        // the input files (the dataset column's dictionary)
  std::vector<std::string> shard_paths;  // the shard_path column's dictionary
  std::vector<TraceRow> rows;
};

// Steps [first, last] (both included, counted from the run's start across epochs); `last`
// UINT64_MAX: to the end of epoch 0. `progress` (may be empty) after each step.
Result<StreamTrace> TraceStreamSteps(const PlanFlags& plan, const StreamFlags& stream,
                                     uint64_t first, uint64_t last,
                                     const std::function<void(uint64_t)>& progress);

}  // namespace stoker::cli
