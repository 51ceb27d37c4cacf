#include "plan/mixture.h"

#include <algorithm>
#include <cmath>

namespace stoker::plan {

Mixture::Mixture(const std::vector<double>& weights, uint64_t total_quanta) {
  double sum = 0;
  for (double w : weights) sum += w;
  for (double w : weights) {
    int64_t q = std::llround(w / sum * static_cast<double>(total_quanta));
    quanta_.push_back(q > 0 ? q : 1);
    total_ += quanta_.back();
  }
  checkpoints_.push_back(
      State{std::vector<int64_t>(quanta_.size(), 0), std::vector<uint64_t>(quanta_.size(), 0)});
}

uint32_t Mixture::Step(State* state) const {
  uint32_t best = 0;
  for (uint32_t k = 0; k < quanta_.size(); ++k) {
    state->deficit[k] += quanta_[k];
    if (state->deficit[k] > state->deficit[best]) best = k;
  }
  state->deficit[best] -= total_;
  ++state->count[best];
  return best;
}

Mixture::State Mixture::StateInPeriod(uint64_t r) const {
  State state;
  uint64_t at;
  {
    std::lock_guard lock(mu_);
    uint64_t index = std::min<uint64_t>(r / kCheckpointRows, checkpoints_.size() - 1);
    state = checkpoints_[index];
    at = index * kCheckpointRows;
  }
  // Extend the table as we go; another thread may have extended it meanwhile (same values).
  while (at + kCheckpointRows <= r) {
    for (uint64_t i = 0; i < kCheckpointRows; ++i) Step(&state);
    at += kCheckpointRows;
    std::lock_guard lock(mu_);
    if (checkpoints_.size() == at / kCheckpointRows) checkpoints_.push_back(state);
  }
  while (at < r) {
    Step(&state);
    ++at;
  }
  return state;
}

Mixture::State Mixture::StateAt(uint64_t g) const {
  const uint64_t period = period_rows();
  State state = StateInPeriod(g % period);
  if (g >= period) {
    std::vector<uint64_t> per_period;
    {
      std::lock_guard lock(mu_);
      if (period_counts_) per_period = *period_counts_;
    }
    if (per_period.empty()) {
      per_period = StateInPeriod(period).count;
      std::lock_guard lock(mu_);
      period_counts_ = per_period;
    }
    for (size_t k = 0; k < state.count.size(); ++k) state.count[k] += g / period * per_period[k];
  }
  return state;
}

std::vector<uint64_t> Mixture::CountsBefore(uint64_t g) const { return StateAt(g).count; }

void Mixture::Walk(uint64_t g, uint64_t count,
                   const std::function<void(uint32_t, uint64_t)>& visit) const {
  const uint64_t period = period_rows();
  State state = StateAt(g);
  uint64_t r = g % period;
  for (uint64_t i = 0; i < count; ++i) {
    if (r == period) {
      // A new period starts from zero deficits, exactly as StateAt counts it.
      std::fill(state.deficit.begin(), state.deficit.end(), 0);
      r = 0;
    }
    uint32_t k = Step(&state);
    ++r;
    visit(k, state.count[k] - 1);
  }
}

}  // namespace stoker::plan
