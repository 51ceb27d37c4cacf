// Equal-count balancing: n items with costs into k groups whose sizes differ by at most one,
// minimizing the largest group's cost. What the plan uses to deal documents (and microbatches)
// to ranks, and what `stoker.balance` runs for data that does not come from a plan.
// Pure and deterministic. Thread-safe (free functions, no state).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "stoker/status.h"

namespace stoker::plan {

// Splits items 0..n-1 (n = costs.size(), each cost finite and >= 0, n < 2^32) into k >= 1
// groups. Group sizes: n mod k groups hold ⌈n/k⌉ items and the others ⌊n/k⌋ (the balancer picks
// which; with k > n, k - n groups are empty). Minimizes the maximum group cost in two passes:
//   1. longest processing time first with a count cap: items by decreasing cost (ties: lower
//      index first), each to the open group of least cost (ties: lower group), a group closing
//      when it holds its share;
//   2. pairwise swaps: while the costliest group can trade one item for a cheaper one of another
//      group and so lower the larger of the two, the best such swap is made (bounded rounds).
// Each returned group lists its items in increasing index order; groups are numbered as pass 1
// opened them. The result is a function of (costs, k) only. O(n log n + rounds·n/k·log(n/k)).
// Errors (kInvalidArgument): k == 0, a negative or non-finite cost.
Result<std::vector<std::vector<uint32_t>>> BalanceGroups(std::span<const double> costs, uint32_t k);

}  // namespace stoker::plan
