#include "plan/mixture.h"

#include <algorithm>
#include <cmath>

namespace stoker::plan {

Mixture::Mixture(const std::vector<double>& weights, uint64_t total_quanta) {
  double sum = 0;
  for (double w : weights) sum += w;
  for (double w : weights) {
    const int64_t q = std::llround(w / sum * static_cast<double>(total_quanta));
    quanta_.push_back(w > 0 ? static_cast<uint64_t>(std::max<int64_t>(q, 1)) : 0);
  }
  nodes_.reserve(2 * quanta_.size());
  Build(0, static_cast<uint32_t>(quanta_.size()));
}

int32_t Mixture::Build(uint32_t lo, uint32_t hi) {
  if (hi - lo == 1) return -1 - static_cast<int32_t>(lo);
  const int32_t index = static_cast<int32_t>(nodes_.size());
  nodes_.emplace_back();
  const uint32_t mid = lo + (hi - lo) / 2;
  const int32_t left = Build(lo, mid);
  const int32_t right = Build(mid, hi);
  Node& n = nodes_[index];
  n.left = left;
  n.right = right;
  for (uint32_t k = lo; k < hi; ++k) n.quanta += quanta_[k];
  for (uint32_t k = lo; k < mid; ++k) n.left_quanta += quanta_[k];
  return index;
}

uint64_t Mixture::LeftShare(const Node& node, uint64_t n) const {
  if (node.quanta == 0) return 0;
  // floor(n * QL / Q + 1/2), exactly: (2 n QL + Q) / (2 Q), in 128 bits.
  const unsigned __int128 num =
      2 * static_cast<unsigned __int128>(n) * node.left_quanta + node.quanta;
  return static_cast<uint64_t>(num / (2 * static_cast<unsigned __int128>(node.quanta)));
}

void Mixture::NodeCounts(uint64_t g, std::vector<uint64_t>* nodes,
                         std::vector<uint64_t>* datasets) const {
  datasets->assign(quanta_.size(), 0);
  if (nodes_.empty()) {
    (*datasets)[0] = g;
    return;
  }
  nodes->assign(nodes_.size(), 0);
  (*nodes)[0] = g;
  // Children follow their parent in nodes_ (built depth first), so one pass top down.
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const uint64_t n = (*nodes)[i];
    const uint64_t left = LeftShare(nodes_[i], n);
    for (auto [child, rows] : {std::pair{nodes_[i].left, left}, {nodes_[i].right, n - left}}) {
      if (child >= 0) {
        (*nodes)[child] = rows;
      } else {
        (*datasets)[-1 - child] = rows;
      }
    }
  }
}

std::vector<uint64_t> Mixture::CountsBefore(uint64_t g) const {
  std::vector<uint64_t> nodes, datasets;
  NodeCounts(g, &nodes, &datasets);
  return datasets;
}

void Mixture::Walk(uint64_t g, uint64_t count,
                   const std::function<void(uint32_t, uint64_t)>& visit) const {
  std::vector<uint64_t> nodes, datasets;
  NodeCounts(g, &nodes, &datasets);
  for (uint64_t i = 0; i < count; ++i) {
    // Descend: at each node the row goes left when the left child's share grows with it.
    int32_t at = nodes_.empty() ? -1 : 0;
    while (at >= 0) {
      const Node& node = nodes_[at];
      const uint64_t n = nodes[at]++;
      const bool left = LeftShare(node, n + 1) > LeftShare(node, n);
      at = left ? node.left : node.right;
    }
    const uint32_t k = static_cast<uint32_t>(-1 - at);
    visit(k, datasets[k]++);
  }
}

}  // namespace stoker::plan
