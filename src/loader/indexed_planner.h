// IndexedPlanner: Loader::Open's planner. A PlanBatchPlanner (rows, provenance, steps, states of
// the indexed plan) with the look-ahead of remote data, which the loader drives through
// BatchPlanner's Started/Delivered/Stopped: the node-local cache's shard schedule
// (cache_lookahead.h: the shards of at least 64 steps ahead, scheduled at the start and again
// once half of the steps covered, at least kRescheduleSteps, have been delivered) and the
// read-ahead of pieces for datasets read by one request per piece (piece_lookahead.h).
// Thread-safe as any BatchPlanner: the look-ahead's three methods come from the loader's consumer
// thread, one at a time; the rest from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "loader/piece_lookahead.h"
#include "plan/plan_batch_planner.h"

namespace stoker::loader {

inline constexpr uint64_t kRescheduleSteps = 16;

class IndexedPlanner final : public PlanBatchPlanner {
 public:
  // `pieces`: the read-ahead of the datasets read by request (null or inactive: none);
  // `long_documents`: what the datasets' LongDocuments policy changed (PreparePlannedDataset).
  IndexedPlanner(std::shared_ptr<const Plan> plan, uint32_t rank,
                 std::vector<std::shared_ptr<const TokenSource>> sources,
                 std::vector<std::string> paths, std::unique_ptr<PieceLookAhead> pieces,
                 LongDocumentCounts long_documents);

  LongDocumentCounts LongDocuments() const override { return long_documents_; }

  void Started(const PlanPosition& pos) const override;
  void Delivered(const PlanPosition& next) const override;
  void Stopped() const override;

 private:
  const LongDocumentCounts long_documents_;
  const bool cached_sources_;  // any source reads through the node-local cache
  mutable uint64_t delivered_since_schedule_ = 0;
  mutable uint64_t scheduled_steps_ = 0;    // steps the last schedule covered
  std::unique_ptr<PieceLookAhead> pieces_;  // null: no dataset is read ahead
};

}  // namespace stoker::loader
