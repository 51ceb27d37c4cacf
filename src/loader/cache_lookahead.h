// Look-ahead in plan order for the node-local cache: which shards the next steps of this rank
// read, in the order they read them, handed to each remote dataset's shard opener (a cache
// downloads them ahead; the plain backend opener ignores it). Free function; thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "stoker/plan.h"
#include "stoker/token_source.h"

namespace stoker {

// The shards steps [from, from + steps) of `rank` read (stopping at the plan's end), per source,
// each once, in the order first read. Empty lists for sources that are not remote stoker datasets.
std::vector<std::vector<uint64_t>> ShardsAhead(
    const Plan& plan, const std::vector<std::shared_ptr<const TokenSource>>& sources,
    PlanPosition from, uint32_t rank, uint64_t steps);

// How far the loader looks ahead: in steps, and in bytes of the shards those steps read (a
// cache downloads the scheduled shards several at once, and needs enough of them ahead to keep
// its download threads busy: 64 steps of 8 x 2048 tokens are one 2 MiB shard).
struct LookAhead {
  uint64_t min_steps = 64;        // always at least this many steps
  uint64_t max_steps = 1024;      // never more (each step is a plan lookup)
  uint64_t bytes = 256ull << 20;  // past min_steps, stop once the shards hold this many bytes
};

struct ShardsAheadResult {
  std::vector<std::vector<uint64_t>> shards;  // per source, as ShardsAhead
  uint64_t steps = 0;                         // the steps they cover
  uint64_t bytes = 0;                         // .bin and .idx bytes of those shards
};

// The shards of the steps from `from` within `window`, per source, each once, in first-read order.
ShardsAheadResult ShardsAheadWithin(const Plan& plan,
                                    const std::vector<std::shared_ptr<const TokenSource>>& sources,
                                    PlanPosition from, uint32_t rank, const LookAhead& window);

// Hands ShardsAheadWithin to each remote dataset's shard opener. Returns the steps covered.
uint64_t ScheduleShardsAhead(const Plan& plan,
                             const std::vector<std::shared_ptr<const TokenSource>>& sources,
                             PlanPosition from, uint32_t rank, const LookAhead& window = {});

// Whether any of `sources` reads through a cache (so that scheduling is worth its plan lookups).
bool AnyCachedSource(const std::vector<std::shared_ptr<const TokenSource>>& sources);

}  // namespace stoker
