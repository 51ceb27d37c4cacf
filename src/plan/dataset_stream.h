// DatasetStream: one dataset's packed rows, epoch by epoch: shuffle (DocumentOrder), then packing
// in windows of consecutive positions of the shuffled order. Per epoch it keeps only a layout (rows
// or tokens before each window, extended as far as needed); windows are packed on demand and a few
// are cached.
// Thread-safe: const methods; the caches are guarded by a mutex never held while computing (a
// layout's own mutex is held while it is extended).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "plan/document_order.h"
#include "stoker/plan.h"

namespace stoker::plan {

class DatasetStream {
 public:
  // `index`: the dataset's index in the plan (its rows' RowPiece::dataset); `key`: the index its
  // shuffle is keyed by (the same, unless the plan continues an edited mixture where the dataset
  // had another index). `num_tokens`: the dataset's tokens; `nonempty_documents` gives its
  // non-empty documents (called once, when first needed: it may make a pass over the lengths).
  // `fingerprint` gives the plan's fingerprint, the key of counted windows; `counter` (may be
  // null: this thread, no cache) counts a whole epoch's windows (stoker/window_counter.h).
  DatasetStream(uint32_t index, uint64_t key, std::shared_ptr<const DatasetLengths> lengths,
                const PlanOptions& options, uint64_t num_tokens,
                std::function<uint64_t()> nonempty_documents,
                std::function<std::string()> fingerprint, const WindowCounter* counter);

  const DatasetLengths& lengths() const { return *lengths_; }
  uint64_t num_tokens() const { return num_tokens_; }

  // Rows in this dataset's epoch `epoch` (packs the whole epoch once for bestfit).
  uint64_t RowsInEpoch(uint64_t epoch) const;
  // A bound every epoch reaches without packing: exact for concat and pad; ceil(tokens / seq_len)
  // for bestfit (a row holds at most seq_len tokens).
  uint64_t RowsLowerBound() const;
  // Appends rows [first, first + count) of `epoch`. Precondition: first + count <= RowsInEpoch.
  void AppendRows(uint64_t epoch, uint64_t first, uint64_t count, std::vector<Row>* out) const;
  // Maps index `j` of the endless stream (epoch 0's rows, then epoch 1's, ...) to (epoch, row).
  std::pair<uint64_t, uint64_t> Locate(uint64_t j) const;

  // The shuffled document order of `epoch`.
  DocumentOrder MakeOrder(uint64_t epoch) const;
  PackingStats ComputePackingStats(uint64_t epoch) const;
  ShuffleStats ComputeShuffleStats(uint64_t epoch) const;

 private:
  struct Layout;
  struct Window;
  struct WindowPool;

  uint64_t EpochKey(uint64_t epoch) const;
  std::shared_ptr<const Layout> GetLayout(uint64_t epoch) const;
  std::shared_ptr<const Window> GetWindow(const Layout& layout, uint64_t window) const;
  std::shared_ptr<const Layout> BuildLayout(uint64_t epoch) const;
  // Tokens (concat) or rows (bestfit, pad) of `window` of the layout's order.
  uint64_t WindowAmount(const Layout& layout, uint64_t window) const;
  // Extends layout.prefix until it passes `amount` or covers every window: window by window for
  // the next few, else CountAllLocked. Holds layout.mu.
  void ExtendLocked(const Layout& layout, uint64_t amount) const;
  // Extends layout.prefix over every window: from the cache file, else counted in parallel (and
  // then cached). Holds layout.mu.
  void CountAllLocked(const Layout& layout) const;
  // The window holding token (concat) or row `amount`; *window_start gets what precedes it.
  uint64_t FindWindow(const Layout& layout, uint64_t amount, uint64_t* window_start) const;
  // A window from the pool (or a new one), filled; back to the pool when its last user lets go.
  std::shared_ptr<const Window> BuildWindow(const Layout& layout, uint64_t window) const;
  void FillWindow(const Layout& layout, uint64_t window, Window* out) const;
  void AppendConcatRows(const Layout& layout, uint64_t first, uint64_t count,
                        std::vector<Row>* out) const;

  uint32_t index_;
  uint64_t key_;
  std::shared_ptr<const DatasetLengths> lengths_;
  PlanOptions options_;
  uint64_t window_docs_;
  uint64_t num_tokens_ = 0;
  std::function<uint64_t()> count_nonempty_;
  mutable std::once_flag nonempty_once_;
  mutable uint64_t nonempty_documents_ = 0;
  uint64_t NonemptyDocuments() const;
  std::function<std::string()> fingerprint_;
  const WindowCounter* counter_;  // may be null

  mutable std::mutex mu_;
  // Most recently used first; small, so linear search.
  mutable std::vector<std::shared_ptr<const Layout>> layouts_;
  mutable std::vector<std::pair<std::pair<uint64_t, uint64_t>, std::shared_ptr<const Window>>>
      windows_;
  mutable std::vector<uint64_t> epoch_row_prefix_{0};  // bestfit: rows before each epoch
  std::shared_ptr<WindowPool> window_pool_;            // shared with the windows' deleters
};

}  // namespace stoker::plan
