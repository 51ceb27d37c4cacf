#include "loader/indexed_planner.h"

#include <algorithm>
#include <utility>

#include "loader/cache_lookahead.h"

namespace stoker::loader {

IndexedPlanner::IndexedPlanner(std::shared_ptr<const Plan> plan, uint32_t rank,
                               std::vector<std::shared_ptr<const TokenSource>> sources,
                               std::vector<std::string> paths,
                               std::unique_ptr<PieceLookAhead> pieces,
                               LongDocumentCounts long_documents)
    : PlanBatchPlanner(std::move(plan), rank, std::move(sources), std::move(paths)),
      long_documents_(long_documents),
      cached_sources_(AnyCachedSource(this->sources())),
      pieces_(pieces != nullptr && pieces->active() ? std::move(pieces) : nullptr) {}

void IndexedPlanner::Started(const PlanPosition& pos) const {
  if (cached_sources_) {
    delivered_since_schedule_ = 0;
    scheduled_steps_ = ScheduleShardsAhead(*plan(), sources(), pos, rank());
  }
  if (pieces_) pieces_->Restart(*plan(), pos, rank());
}

void IndexedPlanner::Delivered(const PlanPosition& next) const {
  if (cached_sources_ &&
      ++delivered_since_schedule_ >= std::max(kRescheduleSteps, scheduled_steps_ / 2)) {
    delivered_since_schedule_ = 0;
    scheduled_steps_ = ScheduleShardsAhead(*plan(), sources(), next, rank());
  }
  if (pieces_) pieces_->Delivered(*plan(), rank());
}

void IndexedPlanner::Stopped() const {
  if (pieces_) pieces_->Shutdown();
}

}  // namespace stoker::loader
