#include "plan/best_fit.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <utility>

namespace stoker::plan {

uint64_t BestFitDecreasing(const std::vector<uint64_t>& lengths, uint64_t capacity,
                           std::vector<uint32_t>* bin_of_item) {
  std::vector<uint32_t> order(lengths.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return lengths[a] != lengths[b] ? lengths[a] > lengths[b] : a < b;
  });
  bin_of_item->assign(lengths.size(), 0);
  // (room left, bin) for bins with room; lower_bound finds the tightest fit.
  std::set<std::pair<uint64_t, uint32_t>> open;
  uint32_t bins = 0;
  for (uint32_t item : order) {
    uint64_t len = lengths[item];
    auto it = open.lower_bound({len, 0});
    uint32_t bin;
    uint64_t room;
    if (it == open.end()) {
      bin = bins++;
      room = capacity - len;
    } else {
      bin = it->second;
      room = it->first - len;
      open.erase(it);
    }
    (*bin_of_item)[item] = bin;
    if (room > 0) open.insert({room, bin});
  }
  return bins;
}

}  // namespace stoker::plan
