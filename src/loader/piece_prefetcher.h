// Read-ahead of document pieces for a dataset read by one request per piece (a remote dataset
// under global shuffle that its cache cannot hold: docs/cache.md, "Global shuffle over remote
// data"). The loader hands it the pieces of the steps ahead, in plan order (PieceLookAhead,
// piece_lookahead.h); `threads` fetch threads read them through the dataset's own reader, so that
// many requests are in flight at once instead of one per worker, and keep the tokens in memory
// until a worker takes them. A worker's read (PrefetchingReader) takes the piece when it is
// fetched, waits for it when its request is in flight, and otherwise reads it itself, as it
// would without read-ahead: nothing a fetch thread does can make a read fail or block one that
// it has not started. A failed fetch is forgotten (the worker's own read then gives the error).
// Pieces of steps far behind the ones being taken (a Restore, an epoch the loader left) are
// dropped, and held bytes are bounded: past `max_bytes` the fetch threads wait.
// A fetch thread reads a run of queued pieces that lie close together in storage with one request
// (up to `max_run_bytes`) and splits it:
//  - a document cut across rows: pieces that follow each other (each starting where the one before
//    ends, or one token before: batch_layout.cc reads the token after a cut), so a long document
//    costs one GET, not one per row it lands in;
//  - neighbouring pieces, of one document or of documents stored back to back
//    (DocumentReader::TokensBetween), at most `max_gap_bytes` apart: the bytes between are read
//    and dropped, cheaper than a request of their own.
// Thread-safe: Add, Clear and Take from any thread; the fetch threads are joined by the
// destructor, which cancels their requests in flight (storage/cancel.h).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/thread_annotations.h"
#include "stoker/document_reader.h"

namespace stoker::loader {

// One piece as the assembler reads it: tokens [offset, offset + count) of `document`, for the
// loader's `step`-th step since the look-ahead started (a counter, not a plan position).
struct PieceFetch {
  uint64_t document = 0;
  uint64_t offset = 0;
  uint64_t count = 0;
  uint64_t step = 0;
};

// Requests in flight at once, per dataset read ahead. Below the per-host bound
// (storage/concurrency_backend.h: 64) so that the workers' own reads and the cache's downloads
// still get slots. 32 requests of 20 ms are 1,600 pieces/s.
inline constexpr uint32_t kPieceReadAheadRequests = 32;

struct PiecePrefetchOptions {
  uint32_t threads = kPieceReadAheadRequests;
  uint64_t max_bytes = 256ull << 20;    // fetched tokens held (4 bytes a token)
  uint64_t stale_steps = 256;           // drop pieces this many steps behind the latest taken
  uint64_t max_run_bytes = 8ull << 20;  // one request's span, at most (tokens at 4 bytes; the
                                        // S3/HTTP part size)
  // Pieces this close are read with one request, the bytes between dropped (tokens at 4 bytes, as
  // max_run_bytes: a uint16 dataset's gap is at most half as many bytes). 64 KiB take about
  // 1.3 ms of a 50 MB/s connection, where a request of its own waits 20-50 ms for its first byte;
  // and a join adds at most that much to what the link carries.
  uint64_t max_gap_bytes = 64ull << 10;
};

class PiecePrefetcher {
 public:
  PiecePrefetcher(std::shared_ptr<const DocumentReader> reader, PiecePrefetchOptions options);
  ~PiecePrefetcher();
  PiecePrefetcher(const PiecePrefetcher&) = delete;
  PiecePrefetcher& operator=(const PiecePrefetcher&) = delete;

  // Queues pieces to fetch, after those queued before (plan order).
  void Add(const std::vector<PieceFetch>& pieces);
  // Forgets every piece queued or fetched (a fetch in flight is dropped when it ends).
  void Clear();
  // Cancels the requests in flight and joins the fetch threads; Take finds nothing after it.
  // Idempotent (the destructor calls it).
  void Shutdown();
  // Copies the piece into `out` if it was fetched or is being fetched (waiting for it then), and
  // says so; false: the caller reads it itself (a piece still queued is taken off the queue).
  bool Take(uint64_t document, uint64_t offset, uint64_t count, int32_t* out);
  bool Take(uint64_t document, uint64_t offset, uint64_t count, int64_t* out);

  // Pieces served from the read-ahead, and pieces a worker had to read itself.
  uint64_t taken() const { return taken_.load(std::memory_order_relaxed); }
  // Reads the fetch threads made (a run of one document's pieces is one).
  uint64_t fetches() const { return fetches_.load(std::memory_order_relaxed); }
  uint64_t missed() const { return missed_.load(std::memory_order_relaxed); }
  uint32_t requests_in_flight_at_most() const { return options_.threads; }

 private:
  struct Key {
    uint64_t document, offset, count;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  enum class State { kQueued, kFetching, kReady, kFailed };
  struct Entry {
    Key key;
    uint64_t step = 0;
    uint64_t generation = 0;
    State state = State::kQueued;
    std::vector<int32_t> tokens;
  };
  using EntryPtr = std::shared_ptr<Entry>;
  using EntryMap = std::unordered_map<Key, std::deque<EntryPtr>, KeyHash>;
  using Position = std::pair<uint64_t, uint64_t>;  // document, offset
  using QueuedMap = std::map<Position, std::deque<EntryPtr>>;
  // Takes `e` out of `key`'s deque in `map`, and the deque out of `map` once empty.
  template <typename Map, typename K>
  static void RemoveFrom(Map& map, const K& key, const EntryPtr& e);
  // Pieces read with one request: pieces[i] starts at token at[i] of the span read.
  struct Run {
    std::vector<EntryPtr> pieces;
    std::vector<uint64_t> at;
    uint64_t tokens = 0;
  };

  template <typename T>
  bool TakeImpl(uint64_t document, uint64_t offset, uint64_t count, T* out);
  void Fetch();
  // `first` and the queued pieces stored close before and after it, in storage order, up to
  // max_run_bytes and the room left under max_bytes; each leaves the queue.
  Run TakeRun(EntryPtr first);  // mu_ held
  // The tokens stored between `a`'s end and `b`'s start (-1: `b` starts on `a`'s last token) when
  // `b` follows `a` within max_gap_bytes and one request reads both; nullopt otherwise.
  std::optional<int64_t> Gap(const Entry& a, const Entry& b) const;
  // Whether `e` may join a run that would then span `span` tokens.
  bool MayJoin(const Entry& e, uint64_t span) const;  // mu_ held
  void Claim(const EntryPtr& e);                      // mu_ held: off the queue, being fetched
  // Reads `run` with one request and hands each piece its tokens (or marks them all failed).
  void ReadRun(const Run& run, std::unique_lock<std::mutex>& l);
  void Unqueue(const EntryPtr& e);  // mu_ held: off queued_at_ (queue_ skips it later)
  // The oldest entry of `key` in the index, or null.
  EntryPtr Find(const Key& key) const;  // mu_ held
  void Erase(const EntryPtr& e);        // mu_ held
  void DropStale();                     // mu_ held

  const std::shared_ptr<const DocumentReader> reader_;
  const PiecePrefetchOptions options_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_;   // fetch threads: a piece queued, space freed, or stop
  std::condition_variable ready_cv_;  // takers: a fetch ended
  // kQueued entries in plan order, and entries a run took meanwhile (skipped when popped).
  std::deque<EntryPtr> queue_ STOKER_GUARDED_BY(mu_);
  EntryMap index_ STOKER_GUARDED_BY(mu_);
  // kQueued entries by where they start, in storage order, to find a run's neighbours.
  QueuedMap queued_at_ STOKER_GUARDED_BY(mu_);
  uint64_t held_bytes_ STOKER_GUARDED_BY(mu_) = 0;  // tokens of kFetching and kReady entries
  uint64_t latest_taken_step_ STOKER_GUARDED_BY(mu_) = 0;
  uint64_t generation_ STOKER_GUARDED_BY(mu_) = 0;  // Clear() starts a new one
  bool stop_ STOKER_GUARDED_BY(mu_) = false;
  std::atomic<bool> cancel_{false};  // the fetch threads' requests (set by the destructor)
  std::atomic<uint64_t> taken_{0};
  std::atomic<uint64_t> missed_{0};
  std::atomic<uint64_t> fetches_{0};
  std::mutex join_mu_;
  std::vector<std::thread> threads_;  // guarded by join_mu_ after the constructor
};

// `reader` whose Reads are served from `prefetcher` first (which must read through `reader`).
std::shared_ptr<const DocumentReader> WithPiecePrefetch(
    std::shared_ptr<const DocumentReader> reader, std::shared_ptr<PiecePrefetcher> prefetcher);

}  // namespace stoker::loader
