#include "plan/slot_assignment.h"

#include <algorithm>
#include <queue>
#include <string>
#include <utility>

#include "plan/balance.h"
#include "plan/best_fit.h"

namespace stoker::plan {
namespace {

struct SlotFill {
  std::vector<std::vector<uint32_t>> docs;
  std::vector<uint64_t> tokens;
  std::vector<double> cost;
};

// One pass for `m` microbatches per rank; false when some document fits in none. Ranks are
// chosen by their total cost (the step time), and within a rank the microbatch of least cost
// with room.
bool FillRanksByCost(std::span<const uint64_t> lengths, const std::vector<uint32_t>& order,
                     const std::vector<double>& doc_cost, uint32_t ranks, uint64_t m,
                     uint64_t budget, uint64_t max_docs, SlotFill* fill) {
  const size_t slots = ranks * m;
  fill->docs.assign(slots, {});
  fill->tokens.assign(slots, 0);
  fill->cost.assign(slots, 0.0);
  std::vector<double> rank_cost(ranks, 0.0);
  using Open = std::pair<double, uint32_t>;  // (cost, rank): least cost, then lower rank
  std::priority_queue<Open, std::vector<Open>, std::greater<>> open;
  for (uint32_t r = 0; r < ranks; ++r) open.push({0.0, r});
  std::vector<Open> no_room;
  for (uint32_t doc : order) {
    const uint64_t length = lengths[doc];
    no_room.clear();
    bool placed = false;
    while (!open.empty()) {
      const Open top = open.top();
      open.pop();
      const uint32_t r = top.second;
      size_t best = slots;
      for (size_t s = r * m; s < (r + 1) * m; ++s) {
        if (fill->tokens[s] + length > budget) continue;
        if (max_docs > 0 && fill->docs[s].size() >= max_docs) continue;
        if (best == slots || fill->cost[s] < fill->cost[best]) best = s;
      }
      if (best == slots) {
        no_room.push_back(top);
        continue;
      }
      fill->docs[best].push_back(doc);
      fill->tokens[best] += length;
      fill->cost[best] += doc_cost[doc];
      rank_cost[r] += doc_cost[doc];
      open.push({rank_cost[r], r});
      placed = true;
      break;
    }
    if (!placed) return false;
    for (const Open& o : no_room) open.push(o);
  }
  return true;
}

}  // namespace

Result<SlotAssignment> AssignSlots(std::span<const uint64_t> lengths, uint32_t ranks,
                                   uint64_t max_tokens_per_microbatch, const CostModel& cost,
                                   uint32_t min_microbatches,
                                   uint64_t max_documents_per_microbatch) {
  if (ranks == 0) return InvalidArgument("balanced slots: ranks must be at least 1");
  if (max_tokens_per_microbatch == 0) {
    return InvalidArgument("balanced slots: max_tokens_per_microbatch must be at least 1");
  }
  STOKER_RETURN_IF_ERROR(ValidateCostModel(cost));
  if (lengths.size() >= (uint64_t{1} << 32)) {
    return InvalidArgument("balanced slots: at most 2^32 - 1 documents per window");
  }
  uint64_t total = 0;
  std::vector<double> doc_cost(lengths.size());
  for (size_t i = 0; i < lengths.size(); ++i) {
    if (lengths[i] == 0 || lengths[i] > max_tokens_per_microbatch) {
      return InvalidArgument("balanced slots: document " + std::to_string(i) + " has " +
                             std::to_string(lengths[i]) + " tokens; each must be 1.." +
                             std::to_string(max_tokens_per_microbatch) +
                             " (max_tokens_per_microbatch): split or drop longer documents "
                             "first");
    }
    total += lengths[i];
    doc_cost[i] = cost.Cost(lengths[i]);
  }
  std::vector<uint32_t> order(lengths.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
    return doc_cost[x] > doc_cost[y] || (doc_cost[x] == doc_cost[y] && x < y);
  });
  const uint64_t per_pass = uint64_t{ranks} * max_tokens_per_microbatch;
  uint64_t m = std::max<uint64_t>({min_microbatches, 1, (total + per_pass - 1) / per_pass});
  const uint64_t cap = max_documents_per_microbatch;
  if (cap > 0) {
    const uint64_t per_rank_pass = uint64_t{ranks} * cap;
    m = std::max<uint64_t>(m, (lengths.size() + per_rank_pass - 1) / per_rank_pass);
  }
  // The fallback when the greedy leaves no room: best-fit rows (the plan's packing), as many as
  // best fit needs.
  std::vector<uint32_t> row_of_doc;
  const uint64_t rows = BestFitDecreasing(std::vector<uint64_t>(lengths.begin(), lengths.end()),
                                          max_tokens_per_microbatch, &row_of_doc, cap);
  SlotFill fill;
  bool dealt_rows = false;
  // Terminates: once ranks·m >= the document count every document can have a slot of its own.
  while (
      !FillRanksByCost(lengths, order, doc_cost, ranks, m, max_tokens_per_microbatch, cap, &fill)) {
    if (rows <= ranks * m) {
      dealt_rows = true;
      break;
    }
    ++m;
  }
  if (m > UINT32_MAX) return InvalidArgument("balanced slots: too many microbatches");
  if (dealt_rows) {
    // Best-fit rows (and empty ones up to ranks·m) dealt to ranks by BalanceGroups, m each: the
    // ranks' totals balanced over whole rows.
    SlotFill rows_fill;
    rows_fill.docs.assign(ranks * m, {});
    rows_fill.tokens.assign(ranks * m, 0);
    rows_fill.cost.assign(ranks * m, 0.0);
    for (uint32_t d = 0; d < lengths.size(); ++d) {
      rows_fill.docs[row_of_doc[d]].push_back(d);
      rows_fill.tokens[row_of_doc[d]] += lengths[d];
      rows_fill.cost[row_of_doc[d]] += doc_cost[d];
    }
    STOKER_ASSIGN_OR_RETURN(auto rows_of_rank, BalanceGroups(rows_fill.cost, ranks));
    fill.docs.clear();
    fill.tokens.clear();
    fill.cost.clear();
    for (const auto& rank_rows : rows_of_rank) {
      for (uint32_t r : rank_rows) {
        fill.docs.push_back(std::move(rows_fill.docs[r]));
        fill.tokens.push_back(rows_fill.tokens[r]);
        fill.cost.push_back(rows_fill.cost[r]);
      }
    }
  }
  for (auto& docs : fill.docs) std::sort(docs.begin(), docs.end());
  SlotAssignment out;
  out.ranks = ranks;
  out.microbatches = static_cast<uint32_t>(m);
  out.slots = std::move(fill.docs);
  out.slot_tokens = std::move(fill.tokens);
  out.slot_cost = std::move(fill.cost);
  return out;
}

}  // namespace stoker::plan
