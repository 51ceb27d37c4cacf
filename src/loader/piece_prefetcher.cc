#include "loader/piece_prefetcher.h"

#include <algorithm>
#include <chrono>

#include "storage/cancel.h"

namespace stoker::loader {
namespace {

// How often a worker waiting for a fetch in flight looks whether its own reads were cancelled
// (Loader close or Restore stop the workers; storage/cancel.h).
constexpr auto kCancelPoll = std::chrono::milliseconds(10);

}  // namespace

size_t PiecePrefetcher::KeyHash::operator()(const Key& k) const {
  uint64_t h = k.document * 0x9E3779B97F4A7C15ull;
  h ^= (k.offset + 0x632BE59BD9B4E019ull) + (h << 6) + (h >> 2);
  h ^= (k.count + 0x8CB92BA72F3D8DD7ull) + (h << 6) + (h >> 2);
  return static_cast<size_t>(h);
}

PiecePrefetcher::PiecePrefetcher(std::shared_ptr<const DocumentReader> reader,
                                 PiecePrefetchOptions options)
    : reader_(std::move(reader)), options_(options) {
  threads_.reserve(options_.threads);
  for (uint32_t i = 0; i < options_.threads; ++i) threads_.emplace_back([this] { Fetch(); });
}

PiecePrefetcher::~PiecePrefetcher() { Shutdown(); }

void PiecePrefetcher::Shutdown() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cancel_.store(true);
  work_cv_.notify_all();
  ready_cv_.notify_all();
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> l(join_mu_);
    threads.swap(threads_);
  }
  for (std::thread& t : threads) t.join();
  Clear();
}

void PiecePrefetcher::Add(const std::vector<PieceFetch>& pieces) {
  if (pieces.empty()) return;
  {
    std::lock_guard<std::mutex> l(mu_);
    DropStale();
    for (const PieceFetch& p : pieces) {
      auto e = std::make_shared<Entry>();
      e->key = Key{p.document, p.offset, p.count};
      e->step = p.step;
      e->generation = generation_;
      queue_.push_back(e);
      queued_at_[Position{p.document, p.offset}].push_back(e);
      index_[e->key].push_back(std::move(e));
    }
  }
  work_cv_.notify_all();
}

void PiecePrefetcher::Clear() {
  {
    std::lock_guard<std::mutex> l(mu_);
    ++generation_;
    queue_.clear();
    queued_at_.clear();
    index_.clear();
    held_bytes_ = 0;  // fetches in flight of the old generation no longer count
    latest_taken_step_ = 0;
  }
  work_cv_.notify_all();
}

PiecePrefetcher::EntryPtr PiecePrefetcher::Find(const Key& key) const {
  auto it = index_.find(key);
  return it == index_.end() || it->second.empty() ? nullptr : it->second.front();
}

template <typename Map, typename K>
void PiecePrefetcher::RemoveFrom(Map& map, const K& key, const EntryPtr& e) {
  auto it = map.find(key);
  if (it == map.end()) return;
  std::deque<EntryPtr>& same = it->second;
  same.erase(std::remove(same.begin(), same.end(), e), same.end());
  if (same.empty()) map.erase(it);
}

void PiecePrefetcher::Erase(const EntryPtr& e) { RemoveFrom(index_, e->key, e); }

void PiecePrefetcher::Unqueue(const EntryPtr& e) {
  RemoveFrom(queued_at_, Position{e->key.document, e->key.offset}, e);
}

void PiecePrefetcher::DropStale() {
  if (latest_taken_step_ < options_.stale_steps) return;
  const uint64_t oldest = latest_taken_step_ - options_.stale_steps;
  for (auto it = index_.begin(); it != index_.end();) {
    std::deque<EntryPtr>& same = it->second;
    for (auto e = same.begin(); e != same.end();) {
      if ((*e)->state == State::kReady && (*e)->step < oldest) {
        held_bytes_ -= 4 * (*e)->key.count;
        std::vector<int32_t>().swap((*e)->tokens);  // queue_ may still hold a run's piece
        e = same.erase(e);
      } else {
        ++e;
      }
    }
    it = same.empty() ? index_.erase(it) : std::next(it);
  }
}

void PiecePrefetcher::Fetch() {
  const storage::CancelScope scope(&cancel_);
  std::unique_lock<std::mutex> l(mu_);
  while (true) {
    work_cv_.wait(l,
                  [&] { return stop_ || (!queue_.empty() && held_bytes_ < options_.max_bytes); });
    if (stop_) return;
    EntryPtr e = std::move(queue_.front());
    queue_.pop_front();
    if (e->state != State::kQueued) continue;  // read already, as part of another piece's run
    Unqueue(e);
    if (e->step + options_.stale_steps < latest_taken_step_) {  // the workers are past it
      Erase(e);
      continue;
    }
    ReadRun(TakeRun(std::move(e)), l);
    ready_cv_.notify_all();
  }
}

std::optional<int64_t> PiecePrefetcher::Gap(const Entry& a, const Entry& b) const {
  const uint64_t a_end = a.key.offset + a.key.count;
  if (a.key.document == b.key.document) {
    // A cut piece reads the token after it, which the next row's piece starts with.
    if (b.key.offset + 1 < a_end || b.key.offset + b.key.count <= a_end) return std::nullopt;
    const int64_t gap = static_cast<int64_t>(b.key.offset) - static_cast<int64_t>(a_end);
    if (gap > static_cast<int64_t>(options_.max_gap_bytes / 4)) return std::nullopt;
    return gap;
  }
  const std::optional<uint64_t> between =
      reader_->TokensBetween(a.key.document, a_end, b.key.document, b.key.offset);
  if (!between || *between > options_.max_gap_bytes / 4) return std::nullopt;
  return static_cast<int64_t>(*between);
}

bool PiecePrefetcher::MayJoin(const Entry& e, uint64_t span) const {
  return 4 * span <= options_.max_run_bytes &&
         held_bytes_ + 4 * e.key.count <= options_.max_bytes &&
         e.step + options_.stale_steps >= latest_taken_step_;
}

void PiecePrefetcher::Claim(const EntryPtr& e) {
  Unqueue(e);
  e->state = State::kFetching;
  held_bytes_ += 4 * e->key.count;
}

PiecePrefetcher::Run PiecePrefetcher::TakeRun(EntryPtr first) {
  Claim(first);
  std::deque<EntryPtr> pieces{std::move(first)};
  std::deque<int64_t> gaps;  // gaps[i]: tokens between pieces[i] and pieces[i + 1]
  uint64_t span = pieces.front()->key.count;
  while (true) {  // the pieces stored after the run
    const Entry& last = *pieces.back();
    const uint64_t end = last.key.offset + last.key.count;
    auto it = queued_at_.lower_bound(Position{last.key.document, end == 0 ? 0 : end - 1});
    if (it == queued_at_.end()) break;
    EntryPtr next = it->second.front();
    const std::optional<int64_t> gap = Gap(last, *next);
    if (!gap || !MayJoin(*next, span + *gap + next->key.count)) break;
    span += *gap + next->key.count;
    Claim(next);
    gaps.push_back(*gap);
    pieces.push_back(std::move(next));
  }
  while (true) {  // the pieces stored before it
    const Entry& head = *pieces.front();
    auto it = queued_at_.lower_bound(Position{head.key.document, head.key.offset});
    if (it == queued_at_.begin()) break;
    EntryPtr prev = std::prev(it)->second.front();
    const std::optional<int64_t> gap = Gap(*prev, head);
    if (!gap || !MayJoin(*prev, span + *gap + prev->key.count)) break;
    span += *gap + prev->key.count;
    Claim(prev);
    gaps.push_front(*gap);
    pieces.push_front(std::move(prev));
  }
  Run run;
  run.tokens = span;
  uint64_t at = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    run.at.push_back(at);
    if (i < gaps.size()) at += pieces[i]->key.count + gaps[i];
    run.pieces.push_back(std::move(pieces[i]));
  }
  return run;
}

void PiecePrefetcher::ReadRun(const Run& run, std::unique_lock<std::mutex>& l) {
  const Key& first = run.pieces.front()->key;
  l.unlock();
  std::vector<int32_t> tokens(run.tokens);
  const Status read = reader_->ReadSpan(first.document, first.offset, run.tokens, tokens.data());
  fetches_.fetch_add(1, std::memory_order_relaxed);
  l.lock();
  for (size_t i = 0; i < run.pieces.size(); ++i) {
    const EntryPtr& e = run.pieces[i];
    if (read.ok()) {
      const auto from = tokens.begin() + static_cast<ptrdiff_t>(run.at[i]);
      e->tokens.assign(from, from + static_cast<ptrdiff_t>(e->key.count));
      e->state = State::kReady;
    } else {  // forgotten: the worker reads it itself and gets the error, if it persists
      e->state = State::kFailed;
      if (e->generation == generation_) held_bytes_ -= 4 * e->key.count;
      Erase(e);
    }
  }
}

template <typename T>
bool PiecePrefetcher::TakeImpl(uint64_t document, uint64_t offset, uint64_t count, T* out) {
  EntryPtr e;
  {
    std::unique_lock<std::mutex> l(mu_);
    e = Find(Key{document, offset, count});
    if (e != nullptr && e->state == State::kQueued) {  // the fetch threads are behind: read it
      queue_.erase(std::find(queue_.begin(), queue_.end(), e));
      Unqueue(e);
      Erase(e);
      e = nullptr;
    }
    while (e != nullptr && e->state == State::kFetching) {
      ready_cv_.wait_for(l, kCancelPoll);
      if (storage::CancelRequested()) e = nullptr;  // the worker is being stopped
    }
    if (e == nullptr || e->state != State::kReady) {
      missed_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    Erase(e);  // the entry is this thread's now
    if (e->generation == generation_) held_bytes_ -= 4 * count;
    latest_taken_step_ = std::max(latest_taken_step_, e->step);
    if (held_bytes_ >= options_.max_bytes) DropStale();
  }
  work_cv_.notify_all();
  std::copy(e->tokens.begin(), e->tokens.end(), out);
  std::vector<int32_t>().swap(e->tokens);  // queue_ may still hold it (a run's piece) a while
  taken_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool PiecePrefetcher::Take(uint64_t document, uint64_t offset, uint64_t count, int32_t* out) {
  return TakeImpl(document, offset, count, out);
}

bool PiecePrefetcher::Take(uint64_t document, uint64_t offset, uint64_t count, int64_t* out) {
  return TakeImpl(document, offset, count, out);
}

namespace {

// A DocumentReader whose token reads come from the read-ahead first; everything else is the
// reader's own.
class PrefetchingReader final : public DocumentReader {
 public:
  PrefetchingReader(std::shared_ptr<const DocumentReader> reader,
                    std::shared_ptr<PiecePrefetcher> prefetcher)
      : reader_(std::move(reader)), prefetcher_(std::move(prefetcher)) {}

  const std::string& path() const override { return reader_->path(); }
  std::optional<uint64_t> FindDocumentLength(uint64_t doc) const override {
    return reader_->FindDocumentLength(doc);
  }
  Status Read(uint64_t doc, uint64_t offset, uint64_t count, int32_t* out) const override {
    if (prefetcher_->Take(doc, offset, count, out)) return Status::OK();
    return reader_->Read(doc, offset, count, out);
  }
  Status Read(uint64_t doc, uint64_t offset, uint64_t count, int64_t* out) const override {
    if (prefetcher_->Take(doc, offset, count, out)) return Status::OK();
    return reader_->Read(doc, offset, count, out);
  }
  void PrefetchIndex(uint64_t doc) const override { reader_->PrefetchIndex(doc); }
  void PrefetchTokens(uint64_t doc, uint64_t offset) const override {
    reader_->PrefetchTokens(doc, offset);
  }
  bool has_loss_mask() const override { return reader_->has_loss_mask(); }
  Status ReadLossMask(uint64_t doc, uint64_t offset, uint64_t count, uint8_t* out) const override {
    return reader_->ReadLossMask(doc, offset, count, out);
  }
  StorageStats storage_stats() const override {
    StorageStats s = reader_->storage_stats();
    s.pieces_read_ahead += prefetcher_->taken();
    s.pieces_read_on_demand += prefetcher_->missed();
    s.read_ahead_requests += prefetcher_->requests_in_flight_at_most();
    return s;
  }

 private:
  std::shared_ptr<const DocumentReader> reader_;
  std::shared_ptr<PiecePrefetcher> prefetcher_;
};

}  // namespace

std::shared_ptr<const DocumentReader> WithPiecePrefetch(
    std::shared_ptr<const DocumentReader> reader, std::shared_ptr<PiecePrefetcher> prefetcher) {
  return std::make_shared<PrefetchingReader>(std::move(reader), std::move(prefetcher));
}

}  // namespace stoker::loader
