// Step windows of a stream counted in tokens (docs/streaming.md, "Steps counted in tokens"):
// every rank's documents, in its draw order, cut into one contiguous window per step. By tokens,
// each window takes documents until it reaches the per-rank budget. By cost (balance='attention'),
// each step first takes the mean over ranks of the cost of those token windows at the ranks'
// current positions (the step's common target, the same on every rank), and each rank's window is
// then the prefix of its remaining documents whose cost comes closest to it. Either way every
// document is in at most one window, in order, and every rank has the same number of windows.
// Plain functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace stoker::stream {

// One rank's window in its draw order: documents [first, end).
struct StepWindow {
  size_t first = 0, end = 0;
  uint64_t tokens = 0;
  double cost = 0;
};

// The windows of every rank, steps in order: out[r][s]. `lengths[r]` and `costs[r]` are rank r's
// documents in its draw order (tokens; cost of the document's pieces). The epoch's step count is
// the most steps every rank can fill: a window of tokens must reach `per_rank` tokens, a window of
// cost must stop by the closest-to-target rule before the rank's documents run out.
std::vector<std::vector<StepWindow>> CutStepWindows(
    const std::vector<std::vector<uint64_t>>& lengths,
    const std::vector<std::vector<double>>& costs, uint64_t per_rank, bool by_cost);

}  // namespace stoker::stream
