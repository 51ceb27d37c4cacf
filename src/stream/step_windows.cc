#include "stream/step_windows.h"

#include <algorithm>

namespace stoker::stream {
namespace {

// Rank r's token window from document `first`: until it reaches `per_rank` tokens; false when
// its documents run out first.
bool TokenWindow(const std::vector<uint64_t>& lengths, const std::vector<double>& costs,
                 size_t first, uint64_t per_rank, StepWindow* w) {
  *w = StepWindow{first, first, 0, 0};
  while (w->end < lengths.size() && w->tokens < per_rank) {
    w->tokens += lengths[w->end];
    w->cost += costs[w->end];
    ++w->end;
  }
  return w->tokens >= per_rank;
}

// The prefix from `first` whose cost comes closest to `target` (at least one document): a
// document is taken while it brings the window's cost closer (cost + its cost / 2 < target);
// false when the documents run out before the rule stops the window.
bool CostWindow(const std::vector<uint64_t>& lengths, const std::vector<double>& costs,
                size_t first, double target, StepWindow* w) {
  *w = StepWindow{first, first, 0, 0};
  while (w->end < lengths.size()) {
    const double c = costs[w->end];
    if (w->end > first && w->cost + c / 2 >= target) return true;
    w->tokens += lengths[w->end];
    w->cost += c;
    ++w->end;
  }
  return false;
}

}  // namespace

std::vector<std::vector<StepWindow>> CutStepWindows(
    const std::vector<std::vector<uint64_t>>& lengths,
    const std::vector<std::vector<double>>& costs, uint64_t per_rank, bool by_cost) {
  const size_t world = lengths.size();
  std::vector<std::vector<StepWindow>> out(world);
  if (world == 0) return out;
  std::vector<size_t> at(world, 0);
  std::vector<StepWindow> step(world);
  for (;;) {
    double target = 0;
    for (size_t r = 0; r < world; ++r) {
      if (!TokenWindow(lengths[r], costs[r], at[r], per_rank, &step[r])) return out;
      target += step[r].cost;
    }
    if (by_cost) {
      target /= static_cast<double>(world);
      for (size_t r = 0; r < world; ++r) {
        if (!CostWindow(lengths[r], costs[r], at[r], target, &step[r])) return out;
      }
    }
    for (size_t r = 0; r < world; ++r) {
      out[r].push_back(step[r]);
      at[r] = step[r].end;
    }
  }
}

}  // namespace stoker::stream
