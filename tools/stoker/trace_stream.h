// `stoker trace --stream` (docs/lineage.md): the pieces of run steps A..B of the streaming path,
// every rank (each rank's own planner, as `stoker explain --stream` opens it, asked step after
// step), held in memory with the names they use, for a TraceTable. Not thread-safe: one command.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "plan_flags.h"
#include "stoker/planner.h"
#include "stoker/status.h"
#include "stream_flags.h"
#include "trace_table.h"

namespace stoker::cli {

// Strings numbered in the order first seen (a dictionary column's values).
class StringIndex {
 public:
  int64_t Index(const std::string& s) {
    auto [it, added] = index_.emplace(s, static_cast<int64_t>(values_.size()));
    if (added) values_.push_back(s);
    return it->second;
  }
  std::vector<std::string> Take() { return std::move(values_); }

 private:
  std::vector<std::string> values_;
  std::unordered_map<std::string, int64_t> index_;
};

struct StreamTrace {
  std::vector<std::string> names;        // the input files (the dataset column's dictionary)
  std::vector<std::string> shard_paths;  // the shard_path column's dictionary
  std::vector<TraceRow> rows;
};

// Where run step `run_step` is in the stream: step `epoch_step` of epoch `epoch` (the run's
// start by default; a run record's segment that resumed elsewhere says where), and the
// fingerprint the run recorded for its stream ("": none to check).
struct StreamStart {
  uint64_t run_step = 0;
  uint64_t epoch = 0;
  uint64_t epoch_step = 0;
  std::string fingerprint;
};

// Every rank's stream planner of one world, opened from the flags as the loaders opened them.
struct StreamWorld {
  PlanOptions options;
  std::vector<std::shared_ptr<const BatchPlanner>> planners;  // by rank
};

// kFailedPrecondition (naming the inputs) when the stream rebuilt from the flags has another
// fingerprint than `fingerprint` ("": none to check).
Result<StreamWorld> OpenStreamWorld(const PlanFlags& plan, const StreamFlags& stream,
                                    const std::string& fingerprint = "");

// The plan position (every rank's) of run step `step` (>= start.run_step) of `world` counted on
// from `start` across epochs.
Result<PlanPosition> StreamPositionOf(const StreamWorld& world, const StreamStart& start,
                                      uint64_t step);

// Steps [first, last] of `world` (both included, run steps counted on from `start` across epochs;
// first >= start.run_step); `last` UINT64_MAX: to the end of the start's epoch. `progress` (may
// be empty) after each step.
Result<StreamTrace> TraceStreamWorld(const StreamWorld& world, uint64_t first, uint64_t last,
                                     const std::function<void(uint64_t)>& progress,
                                     const StreamStart& start = {});

// OpenStreamWorld(plan, stream, start.fingerprint), then TraceStreamWorld.
Result<StreamTrace> TraceStreamSteps(const PlanFlags& plan, const StreamFlags& stream,
                                     uint64_t first, uint64_t last,
                                     const std::function<void(uint64_t)>& progress,
                                     const StreamStart& start = {});

}  // namespace stoker::cli
