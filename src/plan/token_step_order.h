// Order randomness of steps counted in tokens (docs/plan.md, "Order randomness"). The windows of
// a token step are cut from the row plan's own shuffled order (DocumentOrder), so the order of
// windows, and so the epoch-to-epoch randomness, is today's; what balancing changes is the order
// inside a window. The measure: each piece's displacement, |its place in the order served − its
// place in the plain shuffled order|, counted in pieces (a document longer than a microbatch is
// its pieces). The order served is global microbatch by microbatch: microbatch 0 of rank 0, of
// rank 1, ..., then microbatch 1 of every rank, each slot's pieces in order. A piece never leaves
// its window, so its displacement is below the window's piece count n: the bound is n − 1, and
// today's row plan (pack=bestfit) already moves a document by up to bestfit_window − 1.
// Plain values and pure functions: thread-safe.
#pragma once

#include <cstdint>

#include "plan/token_steps.h"

namespace stoker::plan {

struct OrderDisplacement {
  uint64_t pieces = 0;     // pieces measured
  uint64_t max = 0;        // the largest displacement
  double sum = 0;          // Σ displacement
  uint64_t bound = 0;      // max over the steps measured of (window pieces − 1)
  double uniform_sum = 0;  // Σ over steps of (n² − 1) / 3: Σ E|σ(i) − i| of a uniform shuffle
  double mean() const { return pieces > 0 ? sum / static_cast<double>(pieces) : 0.0; }
  // mean displacement / that of a uniform shuffle within each window (0: order kept; ~1: as
  // random as a full reshuffle of every window).
  double relative() const { return uniform_sum > 0 ? sum / uniform_sum : 0.0; }
};

// Adds the pieces of `step` to `*out`.
void AddOrderDisplacement(const TokenStep& step, OrderDisplacement* out);

}  // namespace stoker::plan
