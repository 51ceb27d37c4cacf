#include "trace_stream.h"

#include <memory>

#include "stoker/error_policy.h"
#include "stoker/provenance.h"
#include "stoker/stream.h"

namespace stoker::cli {

Result<StreamWorld> OpenStreamWorld(const PlanFlags& plan, const StreamFlags& stream,
                                    const std::string& fingerprint) {
  StreamWorld world;
  STOKER_ASSIGN_OR_RETURN(world.options, BuildPlanOptions(plan));
  STOKER_ASSIGN_OR_RETURN(StreamOptions so, ToStreamOptions(stream, plan.datasets));
  for (uint32_t rank = 0; rank < world.options.world_size; ++rank) {
    LoaderOptions lo;
    static_cast<PlanOptions&>(lo) = world.options;
    lo.rank = rank;
    STOKER_ASSIGN_OR_RETURN(lo.on_error, ParseErrorPolicy(stream.on_error));
    STOKER_ASSIGN_OR_RETURN(std::shared_ptr<const BatchPlanner> p, OpenStreamPlanner(so, lo));
    world.planners.push_back(std::move(p));
  }
  if (!fingerprint.empty() && world.planners[0]->Fingerprint() != fingerprint) {
    std::string inputs;
    for (const std::string& in : plan.datasets) inputs += (inputs.empty() ? "" : ", ") + in;
    return FailedPrecondition("the stream rebuilt from " + inputs + " has fingerprint " +
                              world.planners[0]->Fingerprint() + ", the run recorded " +
                              fingerprint +
                              ": the inputs (their sizes), the tokenizer or the options are not "
                              "those the run used");
  }
  return world;
}

Result<PlanPosition> StreamPositionOf(const StreamWorld& world, const StreamStart& start,
                                      uint64_t step) {
  const BatchPlanner& planner = *world.planners[0];
  // `at`: the step counted from the start's epoch's first; `epoch_first`: where `epoch` starts.
  const uint64_t at = step - start.run_step + start.epoch_step;
  uint64_t epoch = start.epoch, epoch_first = 0;
  STOKER_ASSIGN_OR_RETURN(uint64_t in_epoch, planner.StepsPerEpoch(epoch));
  while (at >= epoch_first + in_epoch) {
    if (in_epoch == 0)
      return InvalidArgument("the stream's epoch " + std::to_string(epoch) + " has no step");
    epoch_first += in_epoch;
    ++epoch;
    STOKER_ASSIGN_OR_RETURN(in_epoch, planner.StepsPerEpoch(epoch));
  }
  return PlanPosition{epoch,
                      (at - epoch_first) * world.options.batch_size * world.options.world_size};
}

Result<StreamTrace> TraceStreamWorld(const StreamWorld& world, uint64_t first, uint64_t last,
                                     const std::function<void(uint64_t)>& progress,
                                     const StreamStart& start) {
  const PlanOptions& o = world.options;
  if (last == UINT64_MAX) {
    STOKER_ASSIGN_OR_RETURN(const uint64_t steps, world.planners[0]->StepsPerEpoch(start.epoch));
    if (steps <= start.epoch_step) return InvalidArgument("the stream's epoch has no step left");
    last = start.run_step + (steps - start.epoch_step) - 1;
  }
  const uint64_t global_batch = o.batch_size * o.world_size;
  StreamTrace out;
  StringIndex names, shard_paths;
  uint64_t done = 0;
  for (uint64_t step = first; step <= last; ++step) {
    STOKER_ASSIGN_OR_RETURN(const PlanPosition pos, StreamPositionOf(world, start, step));
    const uint64_t k = pos.rows_consumed / global_batch;
    for (uint32_t rank = 0; rank < o.world_size; ++rank) {
      STOKER_ASSIGN_OR_RETURN(StepProvenance p, world.planners[rank]->Explain(pos));
      for (size_t r = 0; r < p.rows.size(); ++r) {
        for (const PieceProvenance& x : p.rows[r].pieces) {
          out.rows.push_back({static_cast<int64_t>(step), static_cast<int64_t>(pos.epoch),
                              static_cast<int64_t>(k), rank, static_cast<int64_t>(r),
                              static_cast<int64_t>(x.row_offset), names.Index(x.source),
                              static_cast<int64_t>(x.shard), shard_paths.Index(x.shard_path),
                              static_cast<int64_t>(x.record), static_cast<int64_t>(x.document),
                              static_cast<int64_t>(x.offset), static_cast<int64_t>(x.length), -1,
                              -1, p.rows[r].repeated ? 1 : 0});
        }
      }
    }
    ++done;
    if (progress) progress(done);
  }
  out.names = names.Take();
  out.shard_paths = shard_paths.Take();
  return out;
}

Result<StreamTrace> TraceStreamSteps(const PlanFlags& plan, const StreamFlags& stream,
                                     uint64_t first, uint64_t last,
                                     const std::function<void(uint64_t)>& progress,
                                     const StreamStart& start) {
  STOKER_ASSIGN_OR_RETURN(StreamWorld world, OpenStreamWorld(plan, stream, start.fingerprint));
  return TraceStreamWorld(world, first, last, progress, start);
}

}  // namespace stoker::cli
