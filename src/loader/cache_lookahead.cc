#include "loader/cache_lookahead.h"

#include <unordered_set>

#include "format/stoker_dataset.h"

namespace stoker {

namespace {

const StokerDataset* RemoteDataset(const TokenSource* source) {
  const auto* ds = dynamic_cast<const StokerDataset*>(source);
  return ds != nullptr && ds->remote() ? ds : nullptr;
}

}  // namespace

std::vector<std::vector<uint64_t>> ShardsAhead(
    const Plan& plan, const std::vector<std::shared_ptr<const TokenSource>>& sources,
    PlanPosition from, uint32_t rank, uint64_t steps) {
  std::vector<std::vector<uint64_t>> upcoming(sources.size());
  std::vector<std::unordered_set<uint64_t>> seen(sources.size());
  PlanPosition pos = from;
  for (uint64_t k = 0; k < steps; ++k) {
    Result<Batch> batch = plan.GetBatchAt(pos, rank);
    if (!batch.ok()) break;  // the end of the plan
    for (const Row& row : batch->rows) {
      for (const RowPiece& piece : row.pieces) {
        if (piece.dataset >= sources.size()) continue;
        const StokerDataset* ds = RemoteDataset(sources[piece.dataset].get());
        if (ds == nullptr || piece.document >= ds->num_documents()) continue;
        const uint64_t shard = ds->shard_of(piece.document);
        if (seen[piece.dataset].insert(shard).second) upcoming[piece.dataset].push_back(shard);
      }
    }
    pos = plan.Advance(pos);
  }
  return upcoming;
}

uint64_t ScheduleShardsAhead(const Plan& plan,
                             const std::vector<std::shared_ptr<const TokenSource>>& sources,
                             PlanPosition from, uint32_t rank, uint64_t steps) {
  bool any = false;
  for (const auto& s : sources) any = any || RemoteDataset(s.get()) != nullptr;
  if (!any) return 0;
  const std::vector<std::vector<uint64_t>> upcoming = ShardsAhead(plan, sources, from, rank, steps);
  uint64_t scheduled = 0;
  for (size_t d = 0; d < sources.size(); ++d) {
    if (upcoming[d].empty()) continue;
    const StokerDataset* ds = RemoteDataset(sources[d].get());
    std::vector<ShardRef> refs;
    for (uint64_t s : upcoming[d]) refs.push_back(ds->shard_ref(s));
    ds->opener()->Schedule(refs);
    scheduled += refs.size();
  }
  return scheduled;
}

bool AnyCachedSource(const std::vector<std::shared_ptr<const TokenSource>>& sources) {
  for (const auto& s : sources) {
    const auto* ds = dynamic_cast<const StokerDataset*>(s.get());
    if (ds != nullptr && ds->cached()) return true;
  }
  return false;
}

}  // namespace stoker
