// Mixture: deterministic weighted interleaving of K row streams. Row g of the mixed stream goes to
// the dataset with the largest deficit weight_k * (g + 1) - count_k (ties: lowest k), computed in
// integers so every machine agrees. Random access replays from a checkpoint of the counts taken
// every kCheckpointRows rows; checkpoints are added lazily.
// Thread-safe: const methods; the checkpoint table is guarded by a mutex.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

namespace stoker::plan {

class Mixture {
 public:
  static constexpr uint64_t kCheckpointRows = 4096;

  // `weights`: K >= 1 positive finite values (relative).
  explicit Mixture(const std::vector<double>& weights);

  size_t size() const { return quanta_.size(); }
  // Rows of each dataset among rows [0, g) of the mixed stream.
  std::vector<uint64_t> CountsBefore(uint64_t g) const;
  // Calls visit(dataset, index of the row in that dataset's stream) for rows [g, g + count).
  void Walk(uint64_t g, uint64_t count, const std::function<void(uint32_t, uint64_t)>& visit) const;

 private:
  struct State {
    std::vector<int64_t> deficit;  // quanta_k * g - count_k * total_  (scaled deficit)
    std::vector<uint64_t> count;
  };
  // Advances `state` by one row and returns the chosen dataset.
  uint32_t Step(State* state) const;
  State StateAt(uint64_t g) const;

  std::vector<int64_t> quanta_;  // weights scaled to integers
  int64_t total_ = 0;
  mutable std::mutex mu_;
  mutable std::vector<State> checkpoints_;  // state at row i * kCheckpointRows
};

}  // namespace stoker::plan
