// Schedule: the mixed row stream of a plan with several datasets, as a sequence of segments of
// global rows, each interleaved by its own stationary Mixture. A phase with constant weights is one
// segment; a ramped phase is up to MixturePhase::kRampSteps segments (of at least kRampStepRows
// rows) whose weights are the ramp's values at their midpoints. Segment s starts with the counts
// its predecessors left (each dataset's position in its own endless row stream), so a dataset
// continues where it stopped whatever the weights do, and the whole stream stays a pure function of
// the options. Thread-safe: const methods; the segments' start counts are computed once, under a
// mutex.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "plan/mixture.h"
#include "stoker/plan.h"
#include "stoker/status.h"

namespace stoker::plan {

class Schedule {
 public:
  // `weights`: the datasets' own weights (used when `phases` is empty). kInvalidArgument names the
  // phase and what is wrong with it. A schedule continued after an edit starts at `origin_row`
  // with each dataset at `start_counts` (the phase holding origin_row starts afresh there); rows
  // before origin_row are not part of it (callers check; lookups there answer as at origin_row).
  static Result<std::unique_ptr<Schedule>> Create(const std::vector<double>& weights,
                                                  const std::vector<MixturePhase>& phases,
                                                  uint64_t origin_row = 0,
                                                  std::vector<uint64_t> start_counts = {});

  // Rows of each dataset among global rows [0, g) (with an origin: its start counts plus the
  // rows of [origin_row, g)).
  std::vector<uint64_t> CountsBefore(uint64_t g) const;
  // Calls visit(dataset, index of the row in that dataset's stream) for rows [g, g + count).
  void Walk(uint64_t g, uint64_t count, const std::function<void(uint32_t, uint64_t)>& visit) const;
  // The phase (index into the options' phases) holding global row g; 0 without phases.
  size_t PhaseAt(uint64_t g) const;

 private:
  struct Segment {
    uint64_t begin = 0;
    uint64_t end = UINT64_MAX;
    size_t phase = 0;
    std::unique_ptr<Mixture> mixture;
  };
  Schedule() = default;
  size_t SegmentAt(uint64_t g) const;
  // The counts at segments_[s].begin; computes (once) those of every segment before it.
  std::vector<uint64_t> StartCounts(size_t s) const;

  std::vector<Segment> segments_;
  mutable std::mutex mu_;
  mutable std::vector<std::vector<uint64_t>> start_counts_;  // of segments [0, size())
};

}  // namespace stoker::plan
