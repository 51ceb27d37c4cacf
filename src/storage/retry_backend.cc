#include "storage/retry_backend.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <random>
#include <thread>

namespace stoker::storage {

Backoff::Backoff(const RetryOptions& options)
    : options_(options),
      rng_(options.seed != 0 ? options.seed
                             : static_cast<uint64_t>(
                                   std::chrono::steady_clock::now().time_since_epoch().count())) {
  options_.max_attempts = std::max(options_.max_attempts, 1);
}

bool Backoff::Sleep(int attempt) const {
  if (CancelRequested()) return false;
  if (options_.metrics != nullptr) options_.metrics->AddRetry();
  double draw;
  {
    std::lock_guard<std::mutex> lock(mu_);
    draw = std::uniform_real_distribution<double>(0.0, 1.0)(rng_);
  }
  // In slices, so that a cancelled thread does not sleep out a long backoff.
  constexpr auto kSlice = std::chrono::milliseconds(20);
  const auto end = std::chrono::steady_clock::now() +
                   std::chrono::milliseconds(BackoffDelayMs(options_, attempt, draw));
  for (auto now = std::chrono::steady_clock::now(); now < end;
       now = std::chrono::steady_clock::now()) {
    if (CancelRequested()) return false;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(kSlice, end - now));
  }
  return !CancelRequested();
}

namespace {

class RetrySource final : public ByteSourceWrapper {
 public:
  RetrySource(std::unique_ptr<ByteSource> inner, std::shared_ptr<const Backoff> backoff)
      : ByteSourceWrapper(std::move(inner)), backoff_(std::move(backoff)) {}

  Result<size_t> ReadAt(uint64_t offset, size_t n, char* out) const override {
    const uint64_t size = size_bytes();
    const size_t expected =
        offset >= size ? 0 : static_cast<size_t>(std::min<uint64_t>(n, size - offset));
    return backoff_->Run([&]() -> Result<size_t> {
      STOKER_ASSIGN_OR_RETURN(size_t got, inner().ReadAt(offset, n, out));
      if (got < expected) {
        // A short body before the object's end is a failed transfer, not the end of the data.
        return Unavailable(uri() + ": short read at byte offset " + std::to_string(offset) + ": " +
                           std::to_string(got) + " of " + std::to_string(expected) + " bytes");
      }
      return got;
    });
  }

 private:
  std::shared_ptr<const Backoff> backoff_;
};

class RetryBackend final : public BackendWrapper {
 public:
  RetryBackend(std::unique_ptr<Backend> inner, const RetryOptions& options)
      : BackendWrapper(std::move(inner)), backoff_(std::make_shared<Backoff>(options)) {}

  Result<ObjectInfo> Stat(const std::string& uri) const override {
    return backoff_->Run([&] { return inner().Stat(uri); });
  }
  // A retried WriteIfAbsent whose first attempt did land answers kAlreadyExists: the caller
  // reads the object back either way.
  Status WriteIfAbsent(const std::string& uri, std::string_view bytes) const override {
    return backoff_->Run([&] { return inner().WriteIfAbsent(uri, bytes); });
  }
  Status Delete(const std::string& uri) const override {
    return backoff_->Run([&] { return inner().Delete(uri); });
  }
  Result<std::vector<ObjectInfo>> List(const std::string& prefix) const override {
    return backoff_->Run([&] { return inner().List(prefix); });
  }
  Result<std::unique_ptr<ByteSource>> OpenForRead(const std::string& uri) const override {
    STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source,
                            backoff_->Run([&] { return inner().OpenForRead(uri); }));
    return std::unique_ptr<ByteSource>(new RetrySource(std::move(source), backoff_));
  }
  Result<std::unique_ptr<ByteSource>> OpenForReadWithSize(const std::string& uri,
                                                          uint64_t size_bytes) const override {
    STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, backoff_->Run([&] {
      return inner().OpenForReadWithSize(uri, size_bytes);
    }));
    return std::unique_ptr<ByteSource>(new RetrySource(std::move(source), backoff_));
  }

 private:
  std::shared_ptr<const Backoff> backoff_;
};

}  // namespace

uint32_t BackoffDelayMs(const RetryOptions& options, int attempt, double draw) {
  const int shift = std::min(attempt - 1, 30);
  const uint64_t cap = std::min<uint64_t>(options.max_delay_ms,
                                          static_cast<uint64_t>(options.base_delay_ms) << shift);
  const uint64_t delay = static_cast<uint64_t>(draw * static_cast<double>(cap + 1));
  return static_cast<uint32_t>(std::min(delay, cap));
}

std::unique_ptr<Backend> NewRetryBackend(std::unique_ptr<Backend> inner, RetryOptions options) {
  options.max_attempts = std::max(options.max_attempts, 1);
  return std::make_unique<RetryBackend>(std::move(inner), options);
}

}  // namespace stoker::storage
