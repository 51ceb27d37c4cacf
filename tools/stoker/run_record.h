// The run record (docs/lineage.md) as `stoker trace` and `stoker summary` read it: every plan a
// run used, from the run step it started at, rebuilt from the datasets it names and checked
// against the fingerprint it recorded; or one plan from the plan flags, as `stoker explain`
// takes them. Not thread-safe: one command at a time (the plans themselves are thread-safe).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/option_table.h"
#include "plan/document_skips.h"
#include "plan/plan_walk.h"
#include "plan_flags.h"
#include "stoker/plan.h"
#include "stoker/status.h"

namespace stoker::cli {

// A dataset's shards, for a piece's shard and record (as stoker/provenance.h names them): path,
// shard_first_document (num_shards + 1 entries), shard_paths (one per shard); from
// plan/document_skips.h, which resolves document ids against it.
using SegmentDataset = ProvenanceDataset;

// One plan of the run: run steps [first_step, end_step) are its steps from `start` on.
struct RunSegment {
  uint64_t first_step = 0;
  uint64_t end_step = UINT64_MAX;
  std::unique_ptr<Plan> plan;
  PlanPosition start;
  std::vector<std::string> names;              // each dataset's name (mixture name or path)
  std::vector<SegmentDataset> datasets;        // each dataset's shards
  std::vector<uint64_t> dataset_name_index;    // each dataset's index into OpenedRun::names
  std::shared_ptr<const DocumentSkips> skips;  // documents its resume state quarantines, or null
};

struct StreamRun;  // stream_run_record.h

struct OpenedRun {
  uint64_t recorded_steps = 0;       // the record's `step`: steps the run had taken (0: flags)
  std::vector<RunSegment> segments;  // empty for a stream's record
  std::shared_ptr<const StreamRun> stream;  // a stoker.Stream's record, else null
  std::vector<std::string> names;           // every dataset name of every segment, first seen first
};

// A run record file, or a loader state ({"format": "stoker-loader-state", ...}) that carries one
// as "run_record". Refuses (kFailedPrecondition, naming the dataset paths) a plan whose
// fingerprint is not the one recorded: the datasets changed since the run.
Result<OpenedRun> OpenRunRecord(const std::string& path);

// Sets every row of `table` that the JSON object `values` holds (a string as it is, any other
// value as its JSON text), as its flag would; errors name `where` and the row.
template <typename S>
Status SetRecordedRows(const OptionTable<S>& table, const nlohmann::json& values,
                       const std::string& where, S* out) {
  if (!values.is_object()) return InvalidArgument(where + ": not an object");
  for (const OptionRow<S>& row : table) {
    const std::string key(row.name);
    if (!row.set || !values.contains(key)) continue;
    const nlohmann::json& v = values[key];
    Status st = row.set(*out, v.is_string() ? v.get<std::string>() : v.dump());
    if (!st.ok()) return st.WithContext(where + ": " + key);
  }
  return Status::OK();
}

// Reads a record's "options" (`o`: every row of the plan's option table it holds, a row missing
// from an older record left at its default, and --long-documents) into `f` as their flags would
// set them; `where` names the segment in errors.
Status ReadRecordedOptions(const nlohmann::json& o, const std::string& where, PlanFlags* f);

// One segment from step 0: the plan of the flags (after ExpandMixtureFlag).
Result<OpenedRun> OpenRunFromFlags(const PlanFlags& flags);

// `--run FILE` (OpenRunRecord) when `run` is given, else the plan flags (ExpandMixtureFlag, then
// OpenRunFromFlags). Refuses both, and flags without DATASETs (or --mixture), --seq-len and
// --batch-size, given on `sub` (which registered them with PlanFlagsUse::kLoader).
Result<OpenedRun> OpenRunOrFlags(const CLI::App& sub, const std::string& run, PlanFlags* flags);

// The segment that holds run step `step` (the last one past every end).
const RunSegment& SegmentOfStep(const OpenedRun& run, uint64_t step);

// Walks run steps [first, last] (both included) across the segments, calling `visit` with each
// piece and its segment, and `progress` (may be empty) after each step with the steps done.
using RunVisitor = std::function<Status(const RunSegment&, const WalkedPiece&)>;
Status WalkRun(const OpenedRun& run, uint64_t first, uint64_t last, const RunVisitor& visit,
               const std::function<void(uint64_t)>& progress = {});

// "A..B" (both included) or "K" -> {A, B}; kInvalidArgument naming the text otherwise.
Result<std::pair<uint64_t, uint64_t>> ParseStepRange(const std::string& text);

}  // namespace stoker::cli
