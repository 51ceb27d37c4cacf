#include "storage/fault_backend.h"

#include <chrono>
#include <mutex>
#include <random>
#include <thread>

namespace stoker::storage {
namespace {

enum class Fault { kNone, kFail, kTruncate, kFlip };

class Dice {
 public:
  Dice(const FaultOptions& options, FaultCounts* counts)
      : options_(options), counts_(counts != nullptr ? counts : &own_counts_), rng_(options.seed) {}

  // Decides the fate of the next request; `is_read` allows truncation and flips.
  Fault Next(bool is_read) {
    if (options_.latency_ms > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(options_.latency_ms));
    }
    double fail_draw, truncate_draw, flip_draw;
    uint64_t number;
    {
      std::lock_guard<std::mutex> lock(mu_);
      std::uniform_real_distribution<double> u(0.0, 1.0);
      fail_draw = u(rng_);
      truncate_draw = u(rng_);
      flip_draw = u(rng_);
      number = counts_->requests.fetch_add(1) + 1;
    }
    if (number == options_.fail_nth || fail_draw < options_.fail_fraction) {
      counts_->failed.fetch_add(1);
      return Fault::kFail;
    }
    if (is_read && truncate_draw < options_.truncate_fraction) {
      counts_->truncated.fetch_add(1);
      return Fault::kTruncate;
    }
    if (is_read && flip_draw < options_.flip_fraction) {
      counts_->flipped.fetch_add(1);
      return Fault::kFlip;
    }
    return Fault::kNone;
  }

  Status Failure(const std::string& uri) const {
    const uint64_t n = counts_->failed.load();
    // Alternate between the two transient failures remote storage gives most.
    return Unavailable(uri + (n % 2 == 1
                                  ? ": injected fault: HTTP 503 SlowDown (reduce your request rate)"
                                  : ": injected fault: connection reset by peer"));
  }

 private:
  FaultOptions options_;
  FaultCounts own_counts_;
  FaultCounts* counts_;
  std::mutex mu_;
  std::mt19937_64 rng_;  // guarded by mu_
};

class FaultySource final : public ByteSourceWrapper {
 public:
  FaultySource(std::unique_ptr<ByteSource> inner, std::shared_ptr<Dice> dice)
      : ByteSourceWrapper(std::move(inner)), dice_(std::move(dice)) {}
  Result<size_t> ReadAt(uint64_t offset, size_t n, char* out) const override {
    const Fault fault = dice_->Next(/*is_read=*/true);
    if (fault == Fault::kFail) return dice_->Failure(uri());
    STOKER_ASSIGN_OR_RETURN(size_t got, inner().ReadAt(offset, n, out));
    if (got > 0 && fault == Fault::kTruncate) return got / 2;
    if (got > 0 && fault == Fault::kFlip) out[got / 2] ^= 0x20;
    return got;
  }

 private:
  std::shared_ptr<Dice> dice_;
};

class FaultBackend final : public BackendWrapper {
 public:
  FaultBackend(std::unique_ptr<Backend> inner, const FaultOptions& options, FaultCounts* counts)
      : BackendWrapper(std::move(inner)), dice_(std::make_shared<Dice>(options, counts)) {}

  Result<ObjectInfo> Stat(const std::string& uri) const override {
    if (dice_->Next(false) == Fault::kFail) return dice_->Failure(uri);
    return inner().Stat(uri);
  }
  Result<std::vector<ObjectInfo>> List(const std::string& prefix) const override {
    if (dice_->Next(false) == Fault::kFail) return dice_->Failure(prefix);
    return inner().List(prefix);
  }
  Result<std::unique_ptr<ByteSource>> OpenForRead(const std::string& uri) const override {
    if (dice_->Next(false) == Fault::kFail) return dice_->Failure(uri);
    STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, inner().OpenForRead(uri));
    return std::unique_ptr<ByteSource>(new FaultySource(std::move(source), dice_));
  }
  // No request at open, so nothing to fail here; the reads are faulty.
  Result<std::unique_ptr<ByteSource>> OpenForReadWithSize(const std::string& uri,
                                                          uint64_t size_bytes) const override {
    STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source,
                            inner().OpenForReadWithSize(uri, size_bytes));
    return std::unique_ptr<ByteSource>(new FaultySource(std::move(source), dice_));
  }

 private:
  std::shared_ptr<Dice> dice_;
};

}  // namespace

std::unique_ptr<Backend> NewFaultBackend(std::unique_ptr<Backend> inner, FaultOptions options,
                                         FaultCounts* counts) {
  return std::make_unique<FaultBackend>(std::move(inner), options, counts);
}

}  // namespace stoker::storage
