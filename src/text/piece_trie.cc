#include "text/piece_trie.h"

#include <algorithm>

namespace stoker {

PieceTrie PieceTrie::Build(std::vector<std::pair<std::string_view, int32_t>> keys) {
  PieceTrie trie;
  std::stable_sort(keys.begin(), keys.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Node>& nodes = trie.nodes_;
  nodes.resize(512);
  nodes[0].check = -2;  // the root is nobody's child
  // Breadth-first over (node, the range of sorted keys below it, depth).
  struct Task {
    int32_t node;
    size_t lo, hi, depth;
  };
  std::vector<Task> todo = {{0, 0, keys.size(), 0}};
  std::vector<std::pair<uint8_t, size_t>> children;  // label, first key of its range
  size_t first_free = 1;
  while (!todo.empty()) {
    const Task task = todo.back();
    todo.pop_back();
    size_t lo = task.lo;
    while (lo < task.hi && keys[lo].first.size() == task.depth) {
      if (nodes[task.node].value < 0 && keys[lo].second >= 0) {
        nodes[task.node].value = keys[lo].second;
      }
      ++lo;  // sorted: the key that ends here comes first (repeats after it)
    }
    if (lo == task.hi) continue;
    children.clear();
    for (size_t i = lo; i < task.hi; ++i) {
      const uint8_t c = static_cast<uint8_t>(keys[i].first[task.depth]);
      if (children.empty() || children.back().first != c) children.emplace_back(c, i);
    }
    while (first_free < nodes.size() && nodes[first_free].check != -1) ++first_free;
    // The lowest base >= 1 whose slots for every label are free.
    int32_t base = std::max<int32_t>(1, static_cast<int32_t>(first_free) - children[0].first);
    const int32_t first_base = base;
    for (;; ++base) {
      if (static_cast<size_t>(base) + 512 > nodes.size()) nodes.resize(nodes.size() * 2);
      bool fits = true;
      for (const auto& [c, at] : children) {
        if (nodes[static_cast<size_t>(base) + c].check != -1) {
          fits = false;
          break;
        }
      }
      if (fits) break;
    }
    // A dense array keeps holes that few nodes fit: scanning from the first of them for every
    // later node made a build quadratic (a 96,103-piece vocabulary took two minutes). Once a search
    // passes many slots, later ones start near where it ended; the holes it leaves cost 12 bytes.
    constexpr int32_t kMaxScan = 256;
    if (base - first_base > kMaxScan) {
      first_free = static_cast<size_t>(base + children[0].first - kMaxScan);
    }
    nodes[task.node].base = base;
    for (size_t k = 0; k < children.size(); ++k) {
      const int32_t child = base + children[k].first;
      nodes[child].check = task.node;
      const size_t end = k + 1 < children.size() ? children[k + 1].second : task.hi;
      todo.push_back({child, children[k].second, end, task.depth + 1});
    }
  }
  // Trim to the last used node, plus 256 so that base + byte never leaves the array.
  size_t used = nodes.size();
  while (used > 1 && nodes[used - 1].check == -1) --used;
  int32_t max_base = 0;
  for (size_t i = 0; i < used; ++i) max_base = std::max(max_base, nodes[i].base);
  nodes.resize(std::max(used, static_cast<size_t>(max_base) + 256));
  nodes.shrink_to_fit();
  return trie;
}

}  // namespace stoker
