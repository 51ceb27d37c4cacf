// Mixture: deterministic weighted interleaving of K row streams, with O(K) random access and no
// state. Weights are kept as integer quanta summing to about `total_quanta`, so every machine
// agrees bit for bit. The datasets are the leaves of a balanced binary tree (index halves); a
// node that has received n rows gives its left child floor(n * Q_left / Q_node + 1/2) of them
// (Q: the quanta below), the right child the rest. For two datasets this is exactly the deficit
// rule (Megatron's blending: the row goes to the dataset furthest behind its weight); every
// dataset is within depth/2 rows of its weight at every prefix (within one row for up to three
// datasets, and for any number when weights are balanced; docs/plan.md, "Mixtures").
// Counts before any row are closed-form, top down, and a walk takes O(depth) per row.
// Thread-safe: immutable after construction; every method is const.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace stoker::plan {

class Mixture {
 public:
  static constexpr uint64_t kDefaultQuanta = uint64_t{1} << 30;

  // `weights`: K >= 1 finite values >= 0 (relative), at least one positive. A dataset of weight 0
  // is never chosen.
  explicit Mixture(const std::vector<double>& weights, uint64_t total_quanta = kDefaultQuanta);

  size_t size() const { return quanta_.size(); }
  // Rows of each dataset among rows [0, g) of the mixed stream.
  std::vector<uint64_t> CountsBefore(uint64_t g) const;
  // Calls visit(dataset, index of the row in that dataset's stream) for rows [g, g + count).
  void Walk(uint64_t g, uint64_t count, const std::function<void(uint32_t, uint64_t)>& visit) const;

 private:
  struct Node {
    uint64_t quanta = 0;       // below this node
    uint64_t left_quanta = 0;  // below its left child
    int32_t left = -1;         // child node indexes, or -1 - dataset for a leaf
    int32_t right = -1;
  };
  int32_t Build(uint32_t lo, uint32_t hi);
  // Rows of n that node `node` gives its left child.
  uint64_t LeftShare(const Node& node, uint64_t n) const;
  // Rows of every node (and, through the leaves, every dataset) among rows [0, g).
  void NodeCounts(uint64_t g, std::vector<uint64_t>* nodes, std::vector<uint64_t>* datasets) const;

  std::vector<uint64_t> quanta_;
  std::vector<Node> nodes_;  // nodes_[0] is the root
};

}  // namespace stoker::plan
