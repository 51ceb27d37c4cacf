#include "plan/mixture.h"

#include <algorithm>
#include <cmath>

namespace stoker::plan {

Mixture::Mixture(const std::vector<double>& weights) {
  double sum = 0;
  for (double w : weights) sum += w;
  // 2^40 quanta in all: the weights are kept to ~1e-12, and deficits stay far from overflow.
  for (double w : weights) {
    int64_t q = std::llround(w / sum * 1099511627776.0);
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

Mixture::State Mixture::StateAt(uint64_t g) const {
  State state;
  uint64_t at;
  {
    std::lock_guard lock(mu_);
    uint64_t index = std::min<uint64_t>(g / kCheckpointRows, checkpoints_.size() - 1);
    state = checkpoints_[index];
    at = index * kCheckpointRows;
  }
  // Extend the table as we go; another thread may have extended it meanwhile (same values).
  while (at + kCheckpointRows <= g) {
    for (uint64_t i = 0; i < kCheckpointRows; ++i) Step(&state);
    at += kCheckpointRows;
    std::lock_guard lock(mu_);
    if (checkpoints_.size() == at / kCheckpointRows) checkpoints_.push_back(state);
  }
  while (at < g) {
    Step(&state);
    ++at;
  }
  return state;
}

std::vector<uint64_t> Mixture::CountsBefore(uint64_t g) const { return StateAt(g).count; }

void Mixture::Walk(uint64_t g, uint64_t count,
                   const std::function<void(uint32_t, uint64_t)>& visit) const {
  State state = StateAt(g);
  for (uint64_t i = 0; i < count; ++i) {
    uint32_t k = Step(&state);
    visit(k, state.count[k] - 1);
  }
}

}  // namespace stoker::plan
