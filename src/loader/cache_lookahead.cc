#include "loader/cache_lookahead.h"

#include <algorithm>
#include <unordered_set>

namespace stoker {

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
        const TokenSource& ds = *sources[piece.dataset];
        if (!ds.remote_shards() || piece.document >= ds.num_documents()) continue;
        const uint64_t shard = ds.ShardOf(piece.document);
        if (seen[piece.dataset].insert(shard).second) {
          out.shards[piece.dataset].push_back(shard);
          const TokenSource::ShardBytes bytes = ds.shard_bytes(shard);
          out.bytes += bytes.bin + bytes.idx;
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
  if (std::ranges::none_of(sources, [](const auto& s) { return s->remote_shards(); })) return 0;
  const ShardsAheadResult upcoming = ShardsAheadWithin(plan, sources, from, rank, window);
  for (size_t d = 0; d < sources.size(); ++d) {
    if (!upcoming.shards[d].empty()) sources[d]->ScheduleShards(upcoming.shards[d]);
  }
  return upcoming.steps;
}

bool AnyCachedSource(const std::vector<std::shared_ptr<const TokenSource>>& sources) {
  return std::ranges::any_of(sources, [](const auto& s) { return s->caches_shards(); });
}

}  // namespace stoker
