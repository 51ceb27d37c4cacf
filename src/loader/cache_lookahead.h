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

// Hands ShardsAhead to each remote dataset's shard opener. Returns the shards scheduled.
uint64_t ScheduleShardsAhead(const Plan& plan,
                             const std::vector<std::shared_ptr<const TokenSource>>& sources,
                             PlanPosition from, uint32_t rank, uint64_t steps);

// Whether any of `sources` reads through a cache (so that scheduling is worth its plan lookups).
bool AnyCachedSource(const std::vector<std::shared_ptr<const TokenSource>>& sources);

}  // namespace stoker
