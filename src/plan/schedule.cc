#include "plan/schedule.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace stoker::plan {
namespace {

Status CheckWeights(const std::vector<double>& w, size_t datasets, const std::string& what) {
  if (w.size() != datasets) {
    return InvalidArgument(what + ": " + std::to_string(w.size()) + " weights for " +
                           std::to_string(datasets) + " datasets");
  }
  double sum = 0;
  for (double x : w) {
    if (!(x >= 0) || !std::isfinite(x)) {
      return InvalidArgument(what + ": a weight must be a non-negative number");
    }
    sum += x;
  }
  if (!(sum > 0)) return InvalidArgument(what + ": the weights must not all be zero");
  return Status::OK();
}

}  // namespace

Result<std::unique_ptr<Schedule>> Schedule::Create(const std::vector<double>& weights,
                                                   const std::vector<MixturePhase>& phases,
                                                   uint64_t origin_row,
                                                   std::vector<uint64_t> start_counts) {
  std::unique_ptr<Schedule> s(new Schedule());
  if (phases.empty()) {
    s->segments_.push_back({0, UINT64_MAX, 0, std::make_unique<Mixture>(weights)});
  }
  uint64_t begin = 0;
  for (size_t p = 0; p < phases.size(); ++p) {
    const MixturePhase& ph = phases[p];
    const std::string what = "mixture phase " + std::to_string(p + 1);
    STOKER_RETURN_IF_ERROR(CheckWeights(ph.weights, weights.size(), what));
    if (ph.end_row <= begin) {
      return InvalidArgument(what + ": ends at global row " + std::to_string(ph.end_row) +
                             ", not after the previous phase's end (" + std::to_string(begin) +
                             ")");
    }
    if (p + 1 == phases.size() && ph.end_row != UINT64_MAX) {
      return InvalidArgument(what + ": the last phase must run to the end (no end row)");
    }
    if (ph.end_weights.empty()) {
      s->segments_.push_back({begin, ph.end_row, p, std::make_unique<Mixture>(ph.weights)});
      begin = ph.end_row;
      continue;
    }
    STOKER_RETURN_IF_ERROR(CheckWeights(ph.end_weights, weights.size(), what + " (ramp's end)"));
    if (ph.end_row == UINT64_MAX) {
      return InvalidArgument(what + ": a ramp needs the phase's end");
    }
    // Equal steps of at least kRampStepRows rows (each step's mixture starts afresh, within one row
    // of its weights), at most kRampSteps of them, each at the ramp's value at its midpoint.
    const uint64_t length = ph.end_row - begin;
    const uint64_t steps =
        std::clamp<uint64_t>(length / MixturePhase::kRampStepRows, 1, MixturePhase::kRampSteps);
    for (uint64_t i = 0; i < steps; ++i) {
      const uint64_t b = begin + length / steps * i + std::min(i, length % steps);
      const uint64_t e = begin + length / steps * (i + 1) + std::min(i + 1, length % steps);
      const double t = (static_cast<double>(i) + 0.5) / static_cast<double>(steps);
      std::vector<double> w(weights.size());
      for (size_t k = 0; k < w.size(); ++k) {
        w[k] = ph.weights[k] + (ph.end_weights[k] - ph.weights[k]) * t;
      }
      s->segments_.push_back({b, e, p, std::make_unique<Mixture>(w)});
    }
    begin = ph.end_row;
  }
  // Continued after an edit: segments from origin_row on, the first one started afresh there.
  if (origin_row > 0) {
    auto& seg = s->segments_;
    seg.erase(seg.begin(), std::find_if(seg.begin(), seg.end(),
                                        [&](const Segment& x) { return x.end > origin_row; }));
    seg.front().begin = origin_row;
  }
  if (start_counts.empty()) start_counts.assign(weights.size(), 0);
  s->start_counts_.push_back(std::move(start_counts));
  return s;
}

size_t Schedule::SegmentAt(uint64_t g) const {
  auto it = std::upper_bound(segments_.begin(), segments_.end(), g,
                             [](uint64_t x, const Segment& seg) { return x < seg.end; });
  return it == segments_.end() ? segments_.size() - 1 : it - segments_.begin();
}

size_t Schedule::PhaseAt(uint64_t g) const { return segments_[SegmentAt(g)].phase; }

std::vector<uint64_t> Schedule::StartCounts(size_t s) const {
  std::lock_guard lock(mu_);
  while (start_counts_.size() <= s) {
    const size_t prev = start_counts_.size() - 1;
    const Segment& seg = segments_[prev];
    std::vector<uint64_t> counts = seg.mixture->CountsBefore(seg.end - seg.begin);
    for (size_t k = 0; k < counts.size(); ++k) counts[k] += start_counts_[prev][k];
    start_counts_.push_back(std::move(counts));
  }
  return start_counts_[s];
}

std::vector<uint64_t> Schedule::CountsBefore(uint64_t g) const {
  g = std::max(g, segments_.front().begin);
  const size_t s = SegmentAt(g);
  std::vector<uint64_t> counts = StartCounts(s);
  std::vector<uint64_t> in = segments_[s].mixture->CountsBefore(g - segments_[s].begin);
  for (size_t k = 0; k < counts.size(); ++k) counts[k] += in[k];
  return counts;
}

void Schedule::Walk(uint64_t g, uint64_t count,
                    const std::function<void(uint32_t, uint64_t)>& visit) const {
  g = std::max(g, segments_.front().begin);
  while (count > 0) {
    const size_t s = SegmentAt(g);
    const Segment& seg = segments_[s];
    const uint64_t take = std::min(count, seg.end - g);
    const std::vector<uint64_t> base = StartCounts(s);
    seg.mixture->Walk(g - seg.begin, take, [&](uint32_t k, uint64_t j) { visit(k, base[k] + j); });
    g += take;
    count -= take;
  }
}

}  // namespace stoker::plan
