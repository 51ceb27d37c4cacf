#include "storage/window_source.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "storage/cancel.h"
#include "storage/shared_part.h"

namespace stoker::storage {
namespace {

class WindowSource final : public ByteSourceWrapper {
 public:
  WindowSource(std::unique_ptr<ByteSource> inner, size_t part_bytes, size_t window_parts)
      : ByteSourceWrapper(std::move(inner)),
        part_bytes_(std::max<size_t>(part_bytes, 1)),
        num_parts_((size_bytes() + part_bytes_ - 1) / part_bytes_),
        window_(std::max<size_t>(window_parts, 1)) {}

  ~WindowSource() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cancel_.store(true);  // a fetch in flight is aborted, not waited out
    cv_.notify_all();
    if (fetcher_.joinable()) fetcher_.join();
  }

  Result<size_t> ReadAt(uint64_t offset, size_t n, char* out) const override {
    return ReadFromParts(size_bytes(), part_bytes_, offset, n, out,
                         [&](uint64_t p) { return GetPart(p); });
  }

 private:
  using Part = SharedPart;

  // Fetches part `ahead_` whenever a reader has moved it forward, until the source is destroyed.
  void FetchAhead() const {
    const CancelScope scope(&cancel_);
    std::unique_lock<std::mutex> lock(mu_);
    uint64_t done = 0;  // parts below this were fetched (or skipped) by this thread
    while (true) {
      cv_.wait(lock, [&] { return stop_ || ahead_ > done; });
      if (stop_) return;
      done = ahead_;
      const uint64_t p = done;
      if (p >= num_parts_ || parts_.count(p) != 0) continue;
      // Claimed under the lock that saw it missing: were the lock dropped in between, the reader
      // could fetch it, move on and let the window drop it, and this thread would fetch it again.
      (void)FetchPart(lock, p);
    }
  }

  Result<std::shared_ptr<const Part>> GetPart(uint64_t p) const {
    std::unique_lock<std::mutex> lock(mu_);
    if (!fetcher_.joinable() && num_parts_ > 1) fetcher_ = std::thread([this] { FetchAhead(); });
    if (p + 1 > ahead_ && p + 1 < num_parts_) {
      ahead_ = p + 1;
      cv_.notify_all();
    }
    if (auto it = parts_.find(p); it != parts_.end()) return AwaitPart(lock, cv_, it->second);
    return FetchPart(lock, p);
  }

  // Claims part `p`, which is not in the table, fetches and publishes it; `lock` held on entry and
  // on return.
  Result<std::shared_ptr<const Part>> FetchPart(std::unique_lock<std::mutex>& lock,
                                                uint64_t p) const {
    auto part = std::make_shared<Part>();  // claimed: fetched and published here (shared_part.h)
    parts_[p] = part;
    const Status status = FetchClaimedPart(lock, cv_, inner(), part_bytes_, p, *part);
    if (!status.ok()) {
      if (auto it = parts_.find(p); it != parts_.end() && it->second == part) parts_.erase(it);
    }
    // The window keeps the newest parts: those below the reader's part go first.
    while (parts_.size() > window_ + 1) parts_.erase(parts_.begin());
    if (!status.ok()) return status;
    return std::shared_ptr<const Part>(part);
  }

  const size_t part_bytes_;
  const uint64_t num_parts_;
  const size_t window_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  mutable std::map<uint64_t, std::shared_ptr<Part>> parts_;  // guarded by mu_
  mutable uint64_t ahead_ = 0;                               // guarded by mu_
  mutable bool stop_ = false;                                // guarded by mu_
  mutable std::atomic<bool> cancel_{false};  // set at destruction: stops the fetcher's request
  mutable std::thread fetcher_;              // last; started by the first read, joined first
};

}  // namespace

std::unique_ptr<ByteSource> NewWindowSource(std::unique_ptr<ByteSource> inner, size_t part_bytes,
                                            size_t window_parts) {
  return std::make_unique<WindowSource>(std::move(inner), part_bytes, window_parts);
}

}  // namespace stoker::storage
