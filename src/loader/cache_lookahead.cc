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

ShardsAheadResult ShardsAheadWithin(const Plan& plan,
                                    const std::vector<std::shared_ptr<const TokenSource>>& sources,
                                    PlanPosition from, uint32_t rank, const LookAhead& window) {
  ShardsAheadResult out;
  out.shards.resize(sources.size());
  std::vector<std::unordered_set<uint64_t>> seen(sources.size());
  PlanPosition pos = from;
  for (; out.steps < window.max_steps; ++out.steps) {
    if (out.steps >= window.min_steps && out.bytes >= window.bytes) break;
    Result<Batch> batch = plan.GetBatchAt(pos, rank);
    if (!batch.ok()) break;  // the end of the plan
    for (const Row& row : batch->rows) {
      for (const RowPiece& piece : row.pieces) {
        if (piece.dataset >= sources.size()) continue;
        const StokerDataset* ds = RemoteDataset(sources[piece.dataset].get());
        if (ds == nullptr || piece.document >= ds->num_documents()) continue;
        const uint64_t shard = ds->shard_of(piece.document);
        if (seen[piece.dataset].insert(shard).second) {
          out.shards[piece.dataset].push_back(shard);
          const ShardInfo& info = ds->manifest().shards[shard];
          out.bytes += info.bin_bytes + info.idx_bytes;
        }
      }
    }
    pos = plan.Advance(pos);
  }
  return out;
}

std::vector<std::vector<uint64_t>> ShardsAhead(
    const Plan& plan, const std::vector<std::shared_ptr<const TokenSource>>& sources,
    PlanPosition from, uint32_t rank, uint64_t steps) {
  return ShardsAheadWithin(plan, sources, from, rank, LookAhead{steps, steps, 0}).shards;
}

uint64_t ScheduleShardsAhead(const Plan& plan,
                             const std::vector<std::shared_ptr<const TokenSource>>& sources,
                             PlanPosition from, uint32_t rank, const LookAhead& window) {
  bool any = false;
  for (const auto& s : sources) any = any || RemoteDataset(s.get()) != nullptr;
  if (!any) return 0;
  const ShardsAheadResult upcoming = ShardsAheadWithin(plan, sources, from, rank, window);
  for (size_t d = 0; d < sources.size(); ++d) {
    if (upcoming.shards[d].empty()) continue;
    const StokerDataset* ds = RemoteDataset(sources[d].get());
    std::vector<ShardRef> refs;
    for (uint64_t s : upcoming.shards[d]) refs.push_back(ds->shard_ref(s));
    ds->opener()->Schedule(refs);
  }
  return upcoming.steps;
}

bool AnyCachedSource(const std::vector<std::shared_ptr<const TokenSource>>& sources) {
  for (const auto& s : sources) {
    const auto* ds = dynamic_cast<const StokerDataset*>(s.get());
    if (ds != nullptr && ds->cached()) return true;
  }
  return false;
}

}  // namespace stoker
