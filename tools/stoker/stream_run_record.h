// The run record of a stoker.Stream (docs/lineage.md, "Streams"): each segment names the stream's
// inputs and options, the plan options (world size, seed, seq_len, pack...) and where it starts;
// `stoker trace --run` and `stoker summary --run` replay every rank's stream over the steps asked
// (reading and tokenizing: it costs what the run's reading cost). A segment that starts after a
// resume on another world size (elastic) is the old ranks' unread documents dealt again: its
// planners are restored as the run's were, from every old rank's state at the resume (the previous
// segment's planners, replayed to that step). Not thread-safe: one command at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "plan/document_skips.h"
#include "plan_flags.h"
#include "stoker/status.h"
#include "stream_flags.h"
#include "trace_stream.h"

namespace stoker::cli {

struct StreamRunSegment {
  uint64_t first_step = 0;  // run steps [first_step, end_step)
  uint64_t end_step = UINT64_MAX;
  StreamStart start;     // where its first step is in the stream's epochs
  bool elastic = false;  // after a resume on another world size (from the previous segment)
  PlanFlags plan;        // datasets: the inputs
  StreamFlags stream;
};

struct StreamRun {
  std::vector<StreamRunSegment> segments;
};

// Whether a run record (format "stoker-run-record") is a stream's: its first segment has "stream".
bool IsStreamRecord(const nlohmann::json& record);

// The record's segments; kInvalidArgument naming `path` and the segment when one is malformed.
Result<StreamRun> ReadStreamRunRecord(const nlohmann::json& record, const std::string& path);

// Whether trace row `row` of `t` is a piece of the document `q` names, INPUT:SHARD:RECORD as the
// stream's provenance names it: the input file (or its last path components), the shard by its
// number in the run (or by its file, for a file the stream did not split), the record in it.
bool StreamPieceIs(const DocumentQuery& q, const StreamTrace& t, const TraceRow& row);

// Every rank's pieces of run steps [first, last] (both included), segment by segment; an elastic
// segment's planners restored from the previous segment's at its first step (that segment's
// world opened, and replayed to there, even when none of its steps is traced). Refuses
// (kFailedPrecondition, naming the steps) an elastic segment with no segment before it, and one
// whose restored position is not the one recorded. `progress` as for TraceStreamSteps, counted
// over the whole range.
Result<StreamTrace> TraceStreamRun(const StreamRun& run, uint64_t first, uint64_t last,
                                   const std::function<void(uint64_t)>& progress);

}  // namespace stoker::cli
