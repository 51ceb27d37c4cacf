#include "plan/dataset_stream.h"

#include <algorithm>
#include <optional>

#include "plan/best_fit.h"

namespace stoker::plan {
namespace {

constexpr uint64_t kConcatWindowDocs = 4096;  // concat/pad windows only bound the work per lookup
constexpr size_t kLayoutCacheSize = 3;
constexpr size_t kWindowCacheSize = 16;
constexpr size_t kWindowPoolSize = 4;
// Windows a lookup packs one by one before it counts the whole epoch instead (in parallel, cached).
constexpr uint64_t kLazyWindows = 256;

uint64_t CeilDiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

}  // namespace

struct DatasetStream::Layout {
  Layout(uint64_t e, DocumentOrder o, uint64_t windows)
      : epoch(e), order(std::move(o)), num_windows(windows) {}
  uint64_t epoch;
  DocumentOrder order;
  uint64_t num_windows;
  // concat: tokens before window j; bestfit and pad: rows before window j. Extended only as far
  // as a lookup needs, so the first batch of an epoch does not wait for the whole epoch; bestfit's
  // exact row count extends it to the end.
  mutable std::mutex mu;
  mutable std::vector<uint64_t> prefix{0};
};

struct DatasetStream::Window {
  std::vector<uint64_t> docs;          // documents at the window's positions
  std::vector<uint64_t> token_prefix;  // concat: tokens before each doc of the window; + total
  std::vector<Row> rows;               // bestfit and pad: the window's rows in planned order
};

// Windows the cache evicted, kept to be refilled in place. Loader workers build windows; freed,
// a window's memory would stay in the malloc arena of whichever worker built it, so the loader's
// RSS would grow with num_workers. Recycled, the windows in memory are bounded by the cache, the
// pool and the windows in use, whatever the thread count.
struct DatasetStream::WindowPool {
  std::mutex mu;
  std::vector<std::unique_ptr<Window>> free;
};

DatasetStream::DatasetStream(uint32_t index, uint64_t key,
                             std::shared_ptr<const DatasetLengths> lengths,
                             const PlanOptions& options, uint64_t num_tokens,
                             std::function<uint64_t()> nonempty_documents,
                             std::function<std::string()> fingerprint, const WindowCounter* counter)
    : index_(index),
      key_(key),
      lengths_(std::move(lengths)),
      options_(options),
      window_docs_(options.pack == PackMode::kBestFit ? options.bestfit_window : kConcatWindowDocs),
      num_tokens_(num_tokens),
      count_nonempty_(std::move(nonempty_documents)),
      fingerprint_(std::move(fingerprint)),
      counter_(counter),
      window_pool_(std::make_shared<WindowPool>()) {}

uint64_t DatasetStream::EpochKey(uint64_t epoch) const {
  return DeriveKey(DeriveKey(Mix64(options_.seed), key_), epoch);
}

DocumentOrder DatasetStream::MakeOrder(uint64_t epoch) const {
  return DocumentOrder(lengths_->num_documents(), &lengths_->shard_first_document, options_.shuffle,
                       options_.block_shards, EpochKey(epoch));
}

uint64_t DatasetStream::NonemptyDocuments() const {
  std::call_once(nonempty_once_, [this] { nonempty_documents_ = count_nonempty_(); });
  return nonempty_documents_;
}

uint64_t DatasetStream::RowsLowerBound() const {
  // A row holds at most seq_len tokens, so bestfit needs at least as many rows as concat.
  return options_.pack == PackMode::kPad ? NonemptyDocuments()
                                         : CeilDiv(num_tokens_, options_.seq_len);
}

uint64_t DatasetStream::RowsInEpoch(uint64_t epoch) const {
  if (options_.pack != PackMode::kBestFit) return RowsLowerBound();  // exact for concat and pad
  std::shared_ptr<const Layout> layout = GetLayout(epoch);
  std::lock_guard lock(layout->mu);
  CountAllLocked(*layout);
  return layout->prefix.back();
}

std::pair<uint64_t, uint64_t> DatasetStream::Locate(uint64_t j) const {
  if (options_.pack != PackMode::kBestFit) {
    uint64_t rows = RowsLowerBound();
    return {j / rows, j % rows};
  }
  std::unique_lock lock(mu_);
  while (epoch_row_prefix_.back() <= j) {
    uint64_t epoch = epoch_row_prefix_.size() - 1;
    // Rows below the lower bound exist whatever the packing: no need to count the epoch yet.
    if (j - epoch_row_prefix_.back() < RowsLowerBound())
      return {epoch, j - epoch_row_prefix_.back()};
    lock.unlock();
    uint64_t rows = RowsInEpoch(epoch);
    lock.lock();
    if (epoch_row_prefix_.size() - 1 == epoch) {
      epoch_row_prefix_.push_back(epoch_row_prefix_.back() + rows);
    }
  }
  auto it = std::upper_bound(epoch_row_prefix_.begin(), epoch_row_prefix_.end(), j);
  uint64_t epoch = static_cast<uint64_t>(it - epoch_row_prefix_.begin()) - 1;
  return {epoch, j - epoch_row_prefix_[epoch]};
}

std::shared_ptr<const DatasetStream::Layout> DatasetStream::GetLayout(uint64_t epoch) const {
  {
    std::lock_guard lock(mu_);
    for (size_t i = 0; i < layouts_.size(); ++i) {
      if (layouts_[i]->epoch == epoch) {
        std::rotate(layouts_.begin(), layouts_.begin() + i, layouts_.begin() + i + 1);
        return layouts_.front();
      }
    }
  }
  // Built without the lock: two threads may both build it; the results are identical.
  std::shared_ptr<const Layout> layout = BuildLayout(epoch);
  std::lock_guard lock(mu_);
  layouts_.insert(layouts_.begin(), layout);
  if (layouts_.size() > kLayoutCacheSize) layouts_.pop_back();
  return layout;
}

std::shared_ptr<const DatasetStream::Window> DatasetStream::GetWindow(const Layout& layout,
                                                                      uint64_t window) const {
  std::pair<uint64_t, uint64_t> key{layout.epoch, window};
  {
    std::lock_guard lock(mu_);
    for (size_t i = 0; i < windows_.size(); ++i) {
      if (windows_[i].first == key) {
        std::rotate(windows_.begin(), windows_.begin() + i, windows_.begin() + i + 1);
        return windows_.front().second;
      }
    }
  }
  std::shared_ptr<const Window> built = BuildWindow(layout, window);
  std::lock_guard lock(mu_);
  windows_.insert(windows_.begin(), {key, built});
  if (windows_.size() > kWindowCacheSize) windows_.pop_back();
  return built;
}

uint64_t DatasetStream::WindowAmount(const Layout& layout, uint64_t window) const {
  const DatasetLengths& len = *lengths_;
  const uint64_t s = options_.seq_len;
  const uint64_t end = std::min<uint64_t>(len.num_documents(), (window + 1) * window_docs_);
  const uint64_t begin = std::min(end, window * window_docs_);
  uint64_t amount = 0;  // tokens (concat) or rows (bestfit, pad)
  std::vector<uint64_t> items;
  // The shuffled documents lie anywhere in a mapped array of lengths: each is a cache and TLB
  // miss, so they are looked up ahead of use and the misses overlap.
  constexpr uint64_t kAhead = 32;
  uint64_t ahead[kAhead];
  for (uint64_t p = begin; p < std::min(end, begin + kAhead); ++p) {
    ahead[p % kAhead] = layout.order.DocumentAt(p);
    len.Prefetch(ahead[p % kAhead]);
  }
  for (uint64_t p = begin; p < end; ++p) {
    uint64_t l = len.length(ahead[p % kAhead]);
    if (p + kAhead < end) {
      ahead[p % kAhead] = layout.order.DocumentAt(p + kAhead);
      len.Prefetch(ahead[p % kAhead]);
    }
    if (options_.pack == PackMode::kConcat) {
      amount += l;
    } else if (options_.pack == PackMode::kPad) {
      amount += l > 0;
    } else {
      amount += l / s;  // full rows of a document longer than a row
      if (l % s != 0) items.push_back(PaddedLength(l % s, options_.pad_each_document_to));
    }
  }
  if (options_.pack == PackMode::kBestFit) {
    std::vector<uint32_t> bins;
    amount += BestFitDecreasing(items, s, &bins, options_.max_documents_per_row);
  }
  return amount;
}

std::shared_ptr<const DatasetStream::Layout> DatasetStream::BuildLayout(uint64_t epoch) const {
  const uint64_t n = lengths_->num_documents();
  return std::make_shared<Layout>(epoch, MakeOrder(epoch), CeilDiv(n, window_docs_));
}

void DatasetStream::ExtendLocked(const Layout& layout, uint64_t amount) const {
  std::vector<uint64_t>& prefix = layout.prefix;
  const uint64_t lazy_end = std::min(layout.num_windows, prefix.size() - 1 + kLazyWindows);
  while (prefix.size() - 1 < lazy_end && prefix.back() <= amount) {
    prefix.push_back(prefix.back() + WindowAmount(layout, prefix.size() - 1));
  }
  // Far into the epoch (a resume): every window, in parallel and from or into the cache, so that
  // the next process that resumes there reads it.
  if (prefix.back() <= amount) CountAllLocked(layout);
}

void DatasetStream::CountAllLocked(const Layout& layout) const {
  std::vector<uint64_t>& prefix = layout.prefix;
  const uint64_t n = layout.num_windows;
  if (prefix.size() - 1 == n) return;
  auto amount = [&](uint64_t w) { return WindowAmount(layout, w); };
  prefix.reserve(n + 1);
  if (counter_ == nullptr) {  // the pure plan: on this thread, kept by nobody else
    while (prefix.size() - 1 < n) prefix.push_back(prefix.back() + amount(prefix.size() - 1));
    return;
  }
  // Counts from a damaged chunk of lengths are never shared (the plan reports the damage).
  const std::vector<uint64_t> counts = counter_->Count(
      {fingerprint_(), index_, layout.epoch, n}, amount, [&] { return lengths_->status().ok(); });
  prefix.assign(1, 0);
  for (uint64_t c : counts) prefix.push_back(prefix.back() + c);
}

uint64_t DatasetStream::FindWindow(const Layout& layout, uint64_t amount,
                                   uint64_t* window_start) const {
  // Held while extending: callers that need the same windows would only repeat the work.
  std::lock_guard lock(layout.mu);
  ExtendLocked(layout, amount);
  const std::vector<uint64_t>& prefix = layout.prefix;
  uint64_t w = static_cast<uint64_t>(std::upper_bound(prefix.begin(), prefix.end(), amount) -
                                     prefix.begin()) -
               1;
  *window_start = prefix[w];
  return w;
}

std::shared_ptr<const DatasetStream::Window> DatasetStream::BuildWindow(const Layout& layout,
                                                                        uint64_t window) const {
  std::unique_ptr<Window> out;
  {
    std::lock_guard lock(window_pool_->mu);
    if (!window_pool_->free.empty()) {
      out = std::move(window_pool_->free.back());
      window_pool_->free.pop_back();
    }
  }
  if (out == nullptr) out = std::make_unique<Window>();
  out->docs.clear();
  out->token_prefix.clear();
  out->rows.clear();
  FillWindow(layout, window, out.get());
  return std::shared_ptr<const Window>(out.release(), [pool = window_pool_](const Window* w) {
    std::unique_ptr<Window> owned(const_cast<Window*>(w));
    std::lock_guard lock(pool->mu);
    if (pool->free.size() < kWindowPoolSize) pool->free.push_back(std::move(owned));
  });
}

void DatasetStream::FillWindow(const Layout& layout, uint64_t window, Window* out) const {
  const DatasetLengths& len = *lengths_;
  const uint64_t s = options_.seq_len;
  uint64_t end = std::min<uint64_t>(len.num_documents(), (window + 1) * window_docs_);
  // Sized once: windows are built by loader workers, and growing by doubling would leave each
  // worker's malloc arena holding the sum of the steps.
  out->docs.reserve(end - std::min(end, window * window_docs_));
  for (uint64_t p = window * window_docs_; p < end; ++p) {
    out->docs.push_back(layout.order.DocumentAt(p));
  }
  if (options_.pack == PackMode::kConcat) {
    out->token_prefix.reserve(out->docs.size() + 1);
    out->token_prefix.push_back(0);
    for (uint64_t d : out->docs) {
      out->token_prefix.push_back(out->token_prefix.back() + len.length(d));
    }
    return;
  }
  if (options_.pack == PackMode::kPad) {
    for (uint64_t d : out->docs) {
      const uint64_t l = len.length(d);
      if (l > 0) out->rows.push_back(Row{{RowPiece{index_, d, 0, std::min(l, s)}}});
    }
    return;
  }
  // bestfit: whole rows for the full seq_len pieces of long documents, then the packed rest.
  std::vector<Row> rows;
  std::vector<RowPiece> items;
  std::vector<uint64_t> item_lengths;
  for (uint64_t d : out->docs) {
    uint64_t l = len.length(d);
    for (uint64_t off = 0; off + s <= l; off += s)
      rows.push_back(Row{{RowPiece{index_, d, off, s}}});
    if (l % s != 0) {
      items.push_back(RowPiece{index_, d, l - l % s, l % s});
      // With pad_each_document_to, a piece takes its padded room (seq_len is a multiple of it).
      item_lengths.push_back(PaddedLength(l % s, options_.pad_each_document_to));
    }
  }
  std::vector<uint32_t> bins;
  uint64_t num_bins = BestFitDecreasing(item_lengths, s, &bins, options_.max_documents_per_row);
  size_t first_bin_row = rows.size();
  rows.resize(first_bin_row + num_bins);
  // Pieces in a row go longest first, as packed; ties keep the shuffled order.
  std::vector<uint32_t> order(items.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return item_lengths[a] > item_lengths[b]; });
  for (uint32_t i : order) rows[first_bin_row + bins[i]].pieces.push_back(items[i]);
  // Packing sorts by length; a keyed permutation of the window's rows keeps long and short rows
  // from lining up with ranks.
  KeyedPermutation perm(rows.size(), DeriveKey(EpochKey(layout.epoch), 0xB5F0000000ULL + window));
  out->rows.resize(rows.size());
  for (uint64_t i = 0; i < rows.size(); ++i) out->rows[i] = std::move(rows[perm.Apply(i)]);
}

void DatasetStream::AppendRows(uint64_t epoch, uint64_t first, uint64_t count,
                               std::vector<Row>* out) const {
  if (count == 0) return;
  std::shared_ptr<const Layout> layout = GetLayout(epoch);
  if (options_.pack == PackMode::kConcat) {
    AppendConcatRows(*layout, first, count, out);
    return;
  }
  uint64_t window_start;
  uint64_t w = FindWindow(*layout, first, &window_start);
  uint64_t i = first - window_start;
  while (count > 0) {
    // Only a lower bound from a token total above the lengths' sum (a failed chunk check, which
    // GetRows reports) promises rows past the last window. Never read past the end.
    if (w >= layout->num_windows) {
      out->resize(out->size() + count);
      return;
    }
    std::shared_ptr<const Window> win = GetWindow(*layout, w);
    for (; i < win->rows.size() && count > 0; ++i, --count) out->push_back(win->rows[i]);
    ++w;
    i = 0;
  }
}

void DatasetStream::AppendConcatRows(const Layout& layout, uint64_t first, uint64_t count,
                                     std::vector<Row>* out) const {
  const DatasetLengths& len = *lengths_;
  const uint64_t s = options_.seq_len;
  uint64_t t = first * s;
  uint64_t window_start;
  uint64_t w = FindWindow(layout, t, &window_start);
  // Rows past the last window exist only under a token total above the sum of the lengths: a
  // chunk check has failed then (mapped lengths), which GetRows reports. Never read past the end.
  if (w >= layout.num_windows) {
    out->resize(out->size() + count);
    return;
  }
  std::shared_ptr<const Window> win = GetWindow(layout, w);
  uint64_t local = t - window_start;
  uint64_t i = static_cast<uint64_t>(
                   std::upper_bound(win->token_prefix.begin(), win->token_prefix.end(), local) -
                   win->token_prefix.begin()) -
               1;
  uint64_t off = local - win->token_prefix[i];
  for (uint64_t r = first; r < first + count; ++r) {
    Row row;
    uint64_t need = std::min(s, num_tokens_ - r * s);
    while (need > 0) {
      if (i == win->docs.size()) {
        if (w + 1 >= layout.num_windows) break;  // as above
        win = GetWindow(layout, ++w);
        i = 0;
        off = 0;
        continue;
      }
      uint64_t d = win->docs[i];
      uint64_t take = std::min(need, len.length(d) - off);
      if (take > 0) row.pieces.push_back(RowPiece{index_, d, off, take});
      off += take;
      need -= take;
      if (off == len.length(d)) {
        ++i;
        off = 0;
      }
    }
    out->push_back(std::move(row));
  }
}

}  // namespace stoker::plan
