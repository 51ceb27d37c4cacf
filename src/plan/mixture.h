// Mixture: deterministic weighted interleaving of K row streams. Row g of the mixed stream goes to
// the dataset with the largest deficit weight_k * (g + 1) - count_k (ties: lowest k), computed in
// integers so every machine agrees. Weights are kept as integer quanta summing to about
// `total_quanta`; the stream repeats with that period (the deficits are back at zero after one
// period when every prefix is within one row of the weights), which bounds the work of a lookup
// far into the stream. Random access replays from checkpoints taken every kCheckpointRows rows.
// Thread-safe: const methods; the checkpoint table is guarded by a mutex.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

namespace stoker::plan {

class Mixture {
 public:
  static constexpr uint64_t kCheckpointRows = 4096;
  static constexpr uint64_t kDefaultQuanta = uint64_t{1} << 30;

  // `weights`: K >= 1 positive finite values (relative).
  explicit Mixture(const std::vector<double>& weights, uint64_t total_quanta = kDefaultQuanta);

  size_t size() const { return quanta_.size(); }
  // Rows of the stream before it repeats.
  uint64_t period_rows() const { return static_cast<uint64_t>(total_); }
  // Rows of each dataset among rows [0, g) of the mixed stream.
  std::vector<uint64_t> CountsBefore(uint64_t g) const;
  // Calls visit(dataset, index of the row in that dataset's stream) for rows [g, g + count).
  void Walk(uint64_t g, uint64_t count, const std::function<void(uint32_t, uint64_t)>& visit) const;

 private:
  struct State {
    std::vector<int64_t> deficit;  // quanta_k * r - (count_k in this period) * total_
    std::vector<uint64_t> count;
  };
  // Advances `state` by one row and returns the chosen dataset.
  uint32_t Step(State* state) const;
  // The state after r rows of one period (r <= period_rows()).
  State StateInPeriod(uint64_t r) const;
  State StateAt(uint64_t g) const;

  std::vector<int64_t> quanta_;  // weights scaled to integers
  int64_t total_ = 0;
  mutable std::mutex mu_;
  mutable std::vector<State> checkpoints_;  // state after i * kCheckpointRows rows of a period
  mutable std::optional<std::vector<uint64_t>> period_counts_;  // counts over one whole period
};

}  // namespace stoker::plan
