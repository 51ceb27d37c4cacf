// The provenance (stoker/provenance.h) of one step of the streaming path, from the public
// StreamPlanner::RowsAt: each piece's input file, shard, record index within the shard, the byte
// offset of its line, and the token range taken from the document.
// Free function; thread-safe (StreamPlanner is).
#pragma once

#include "stoker/provenance.h"
#include "stream/stream_planner.h"

namespace stoker::stream {

// The rows of the planner's rank at the step starting at `pos`. Errors are RowsAt's.
Result<StepProvenance> ExplainStreamStep(const StreamPlanner& planner, const PlanPosition& pos,
                                         uint32_t rank, uint64_t global_batch_rows);

}  // namespace stoker::stream
