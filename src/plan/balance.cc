#include "plan/balance.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

namespace stoker::plan {
namespace {

using CostItem = std::pair<double, uint32_t>;  // (cost, item index)

// Ascending cost, ties by lower index: how each group keeps its items for the swap search. (A
// function object, not a function, so that the searches inline it.)
constexpr auto LighterFirst = [](const CostItem& x, const CostItem& y) {
  return x.first < y.first || (x.first == y.first && x.second < y.second);
};

// Items by decreasing cost, ties by lower index: a stable LSD radix sort on the cost's bits
// (for costs >= 0 the IEEE-754 bits order like the numbers), 11 bits a pass, skipping the
// passes where every key has the same digit. A fifth of std::sort's instructions at 65,536 items.
std::vector<CostItem> HeaviestFirst(std::span<const double> costs) {
  const size_t n = costs.size();
  std::vector<uint64_t> key(n), key_tmp(n);
  std::vector<uint32_t> index(n), index_tmp(n);
  for (uint32_t i = 0; i < n; ++i) {
    uint64_t bits;
    std::memcpy(&bits, &costs[i], sizeof bits);
    key[i] = ~bits;  // ascending ~bits = descending cost
    index[i] = i;
  }
  constexpr int kDigitBits = 11;
  constexpr size_t kBuckets = size_t{1} << kDigitBits;
  std::vector<uint32_t> count(kBuckets);
  for (int shift = 0; shift < 64; shift += kDigitBits) {
    std::fill(count.begin(), count.end(), 0);
    for (uint64_t k : key) ++count[(k >> shift) & (kBuckets - 1)];
    if (n == 0 || count[(key[0] >> shift) & (kBuckets - 1)] == n) continue;  // one digit: skip
    uint32_t sum = 0;
    for (auto& c : count) sum += std::exchange(c, sum);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t at = count[(key[i] >> shift) & (kBuckets - 1)]++;
      key_tmp[at] = key[i];
      index_tmp[at] = index[i];
    }
    key.swap(key_tmp);
    index.swap(index_tmp);
  }
  std::vector<CostItem> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = {costs[index[i]], index[i]};
  return order;
}

struct BalanceGroup {
  double cost = 0;
  std::vector<CostItem> items;  // ascending (LighterFirst)
};

// Pass 1: longest processing time first, each group capped at its share of the items.
std::vector<BalanceGroup> PlaceLargestFirst(std::span<const double> costs, uint32_t k) {
  const uint64_t n = costs.size();
  const std::vector<CostItem> order = HeaviestFirst(costs);
  const uint64_t base = n / k;
  uint64_t extras_left = n % k;  // groups that may still take a ⌈n/k⌉-th item
  std::vector<BalanceGroup> groups(k);
  for (auto& g : groups) g.items.reserve(base + 1);
  // The open groups as a binary min-heap on (cost, group): the top takes the item and sinks
  // (one sift-down per item, where pop + push would take two), or leaves when it has closed.
  std::vector<CostItem> heap(k);  // (cost, group)
  for (uint32_t g = 0; g < k; ++g) heap[g] = {0.0, g};
  const auto before = [](const CostItem& x, const CostItem& y) {
    return x.first < y.first || (x.first == y.first && x.second < y.second);
  };
  auto sift_down = [&](size_t at) {
    const CostItem moving = heap[at];
    for (;;) {
      size_t child = 2 * at + 1;
      if (child >= heap.size()) break;
      if (child + 1 < heap.size() && before(heap[child + 1], heap[child])) ++child;
      if (!before(heap[child], moving)) break;
      heap[at] = heap[child];
      at = child;
    }
    heap[at] = moving;
  };
  for (const CostItem& item : order) {
    for (;;) {
      const uint32_t g = heap[0].second;
      const uint64_t count = groups[g].items.size();
      if (count > base || (count == base && extras_left == 0)) {  // closed: leaves the heap
        heap[0] = heap.back();
        heap.pop_back();
        sift_down(0);
        continue;
      }
      if (count == base) --extras_left;
      groups[g].items.push_back(item);
      groups[g].cost += item.first;
      heap[0].first = groups[g].cost;
      sift_down(0);
      break;
    }
  }
  for (auto& g : groups) std::reverse(g.items.begin(), g.items.end());  // now ascending
  return groups;
}

// The swap of one item of `heavy` for one of `light` that brings their costs closest together
// while lowering the larger of the two; false when none lowers it.
bool BestSwap(const BalanceGroup& heavy, const BalanceGroup& light, size_t* x_at, size_t* y_at) {
  const double gap = heavy.cost - light.cost;
  if (!(gap > 0)) return false;
  // A swap moving delta = c_x - c_y (0 < delta < gap) leaves max(heavy - delta, light + delta);
  // the best delta is the one nearest gap / 2.
  double best_excess = gap;  // |delta - gap/2| must beat gap/2 (i.e. 0 < delta < gap)
  bool found = false;
  const double half = gap / 2;
  const auto& ys = light.items;
  for (size_t xi = 0; xi < heavy.items.size(); ++xi) {
    const double target = heavy.items[xi].first - half;  // the ideal c_y
    auto it = std::lower_bound(ys.begin(), ys.end(), CostItem{target, 0}, LighterFirst);
    for (auto cand : {it, it == ys.begin() ? ys.end() : it - 1}) {
      if (cand == ys.end()) continue;
      const double delta = heavy.items[xi].first - cand->first;
      if (!(delta > 0) || !(delta < gap)) continue;
      const double excess = std::abs(delta - half);
      if (excess < best_excess) {
        best_excess = excess;
        *x_at = xi;
        *y_at = static_cast<size_t>(cand - ys.begin());
        found = true;
      }
    }
  }
  // Only a swap that lowers the pair's maximum by more than rounding counts.
  return found && half + best_excess < gap * (1 - 1e-12);
}

void InsertSorted(std::vector<CostItem>* items, CostItem item) {
  items->insert(std::lower_bound(items->begin(), items->end(), item, LighterFirst), item);
}

// Pass 2: swaps out of the costliest group while one helps.
void RefineBySwaps(std::vector<BalanceGroup>* groups) {
  const size_t k = groups->size();
  constexpr size_t kPartnersTried = 16;  // cheapest groups tried before giving up a round
  std::vector<uint32_t> by_cost(k);
  double total = 0;
  for (const BalanceGroup& g : *groups) total += g.cost;
  // Swaps stop once the costliest group is within 0.1% of the mean: below that no step time
  // changes measurably.
  const double good_enough = total / static_cast<double>(k) * (1 + 1e-3);
  for (size_t round = 0; round < 8 * k + 64; ++round) {
    for (uint32_t g = 0; g < k; ++g) by_cost[g] = g;
    const size_t tried = std::min(k, kPartnersTried + 1);
    auto cheaper = [&](uint32_t x, uint32_t y) {
      const double cx = (*groups)[x].cost, cy = (*groups)[y].cost;
      return cx < cy || (cx == cy && x < y);
    };
    const uint32_t heavy = *std::max_element(by_cost.begin(), by_cost.end(), cheaper);
    if ((*groups)[heavy].cost <= good_enough) return;
    std::partial_sort(by_cost.begin(), by_cost.begin() + tried, by_cost.end(), cheaper);
    bool swapped = false;
    for (size_t p = 0; p < tried && !swapped; ++p) {
      const uint32_t light = by_cost[p];
      if (light == heavy) continue;
      size_t x_at = 0, y_at = 0;
      BalanceGroup& h = (*groups)[heavy];
      BalanceGroup& l = (*groups)[light];
      if (!BestSwap(h, l, &x_at, &y_at)) continue;
      const CostItem x = h.items[x_at], y = l.items[y_at];
      h.items.erase(h.items.begin() + static_cast<std::ptrdiff_t>(x_at));
      l.items.erase(l.items.begin() + static_cast<std::ptrdiff_t>(y_at));
      InsertSorted(&h.items, y);
      InsertSorted(&l.items, x);
      h.cost += y.first - x.first;
      l.cost += x.first - y.first;
      swapped = true;
    }
    if (!swapped) return;
  }
}

}  // namespace

Result<std::vector<std::vector<uint32_t>>> BalanceGroups(std::span<const double> costs,
                                                         uint32_t k) {
  if (k == 0) return InvalidArgument("balance: k must be at least 1 group");
  if (costs.size() >= (uint64_t{1} << 32)) {
    return InvalidArgument("balance: at most 2^32 - 1 items, not " + std::to_string(costs.size()));
  }
  for (size_t i = 0; i < costs.size(); ++i) {
    if (!std::isfinite(costs[i]) || costs[i] < 0) {
      return InvalidArgument("balance: item " + std::to_string(i) + " has cost " +
                             std::to_string(costs[i]) + "; costs must be finite and >= 0");
    }
  }
  std::vector<BalanceGroup> groups = PlaceLargestFirst(costs, k);
  RefineBySwaps(&groups);
  std::vector<std::vector<uint32_t>> out(k);
  for (uint32_t g = 0; g < k; ++g) {
    out[g].reserve(groups[g].items.size());
    for (const CostItem& item : groups[g].items) out[g].push_back(item.second);
    std::sort(out[g].begin(), out[g].end());
  }
  return out;
}

}  // namespace stoker::plan
