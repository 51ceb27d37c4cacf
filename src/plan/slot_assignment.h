// Balanced microbatches: the documents of one window of the shuffled order into (rank,
// microbatch) slots, every rank the same number of microbatches, every microbatch within a token
// budget, and the costliest slot (by a CostModel) close to the mean. The piece of a balanced
// step the plan computes per window (docs/plan.md, "Balanced steps").
// Pure and deterministic. Thread-safe (free functions, no state).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "plan/cost_model.h"
#include "stoker/status.h"

namespace stoker::plan {

struct SlotAssignment {
  uint32_t ranks = 0;
  uint32_t microbatches = 0;  // per rank
  // slots[rank * microbatches + m]: the window's documents (indices into the lengths given) of
  // that rank's microbatch m, in increasing index order; possibly empty.
  std::vector<std::vector<uint32_t>> slots;
  std::vector<uint64_t> slot_tokens;  // Σ L per slot, each <= the budget
  std::vector<double> slot_cost;      // Σ cost(L) per slot
};

// Places every document (lengths[i] >= 1, each <= max_tokens_per_microbatch: the caller splits
// or drops longer ones first) exactly once, in m microbatches per rank, m the least >=
// min_microbatches (and >= ⌈Σ L / (ranks · budget)⌉) for which one of these places everything:
//   1. the greedy by cost: documents by decreasing cost (ties: lower index), each to the rank of
//      least total cost (ties: lower rank) that has a microbatch with room for it, into that
//      rank's microbatch of least cost with room (ties: lower microbatch). A rank's total is its
//      step time, so ranks are balanced first and their microbatches second;
//   2. when the greedy leaves some document no room but best-fit decreasing (best_fit.h, the
//      plan's packing) needs at most ranks·m rows: those rows, dealt to ranks m each by
//      BalanceGroups on their costs (whole rows balanced: less even than 1, never an extra
//      microbatch).
// The greedy needs room (a budget above the mean microbatch: docs/plan.md, "Balanced steps").
// max_documents_per_microbatch > 0 (PlanOptions::max_documents_per_row): no slot holds more
// documents than that (both passes skip a full slot; m is also >= ⌈n / (ranks · cap)⌉), so a
// window that would overfill a microbatch is spread over others, never cut.
// O(n log n + n·(ranks tried)·m) per pass. Errors (kInvalidArgument): ranks or the budget 0, a
// length of 0 or above the budget, an invalid cost model.
Result<SlotAssignment> AssignSlots(std::span<const uint64_t> lengths, uint32_t ranks,
                                   uint64_t max_tokens_per_microbatch, const CostModel& cost,
                                   uint32_t min_microbatches = 1,
                                   uint64_t max_documents_per_microbatch = 0);

}  // namespace stoker::plan
