#include "storage/part_cache_source.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "storage/cancel.h"
#include "storage/shared_part.h"

namespace stoker::storage {
namespace {

class PartCacheSource final : public ByteSourceWrapper {
 public:
  PartCacheSource(std::unique_ptr<ByteSource> inner, size_t part_bytes, int fetch_ahead)
      : ByteSourceWrapper(std::move(inner)),
        part_bytes_(std::max<size_t>(part_bytes, 1)),
        parts_((size_bytes() + part_bytes_ - 1) / part_bytes_),
        fetch_ahead_(static_cast<int>(std::min<size_t>(std::max(fetch_ahead, 0), parts_.size()))) {}

  // Stops the fetchers: a request in flight is aborted (storage/cancel.h), not waited out.
  ~PartCacheSource() override {
    stop_ = true;
    for (std::thread& t : fetchers_) t.join();
  }

  Result<size_t> ReadAt(uint64_t offset, size_t n, char* out) const override {
    // From the first read on, not from open: a shard opened for its index only (planning without
    // a length index) fetches none of its parts.
    std::call_once(started_, [this] {
      for (int t = 0; t < fetch_ahead_; ++t) fetchers_.emplace_back([this] { FetchAhead(); });
    });
    return ReadFromParts(size_bytes(), part_bytes_, offset, n, out,
                         [&](uint64_t p) { return GetPart(p); });
  }

 private:
  // Fetches the parts in order, skipping those a reader fetched first, until all are fetched or
  // the source is destroyed. A failed part is left for the read that needs it to try again.
  void FetchAhead() const {
    const CancelScope scope(&stop_);
    for (uint64_t p = next_ahead_++; p < parts_.size() && !stop_; p = next_ahead_++) {
      (void)GetPart(p);
    }
  }

  using Part = SharedPart;

  Result<std::shared_ptr<const Part>> GetPart(uint64_t p) const {
    std::unique_lock<std::mutex> lock(mu_);
    if (parts_[p] != nullptr) return AwaitPart(lock, cv_, parts_[p]);
    auto part = std::make_shared<Part>();  // claimed: fetched and published here (shared_part.h)
    parts_[p] = part;
    const Status status = FetchClaimedPart(lock, cv_, inner(), part_bytes_, p, *part);
    if (!status.ok()) {
      parts_[p] = nullptr;
      return status;
    }
    return std::shared_ptr<const Part>(part);
  }

  size_t part_bytes_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  mutable std::vector<std::shared_ptr<Part>> parts_;  // guarded by mu_; null: not fetched
  const int fetch_ahead_;
  mutable std::atomic<uint64_t> next_ahead_{0};
  std::atomic<bool> stop_{false};
  mutable std::once_flag started_;
  mutable std::vector<std::thread> fetchers_;  // last; started by the first read, joined first
};

}  // namespace

std::unique_ptr<ByteSource> NewPartCacheSource(std::unique_ptr<ByteSource> inner, size_t part_bytes,
                                               int fetch_ahead) {
  return std::make_unique<PartCacheSource>(std::move(inner), part_bytes, fetch_ahead);
}

}  // namespace stoker::storage
