#include "storage/concurrency_backend.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "common/uri.h"
#include "storage/cancel.h"

namespace stoker::storage {

ConcurrencyLimiter::ConcurrencyLimiter(const ConcurrencyOptions& options)
    : options_{std::max<uint32_t>(options.max_in_flight, 1),
               std::clamp<uint32_t>(options.min_in_flight, 1,
                                    std::max<uint32_t>(options.max_in_flight, 1))},
      limit_(options_.max_in_flight) {}

Status ConcurrencyLimiter::Acquire() {
  std::unique_lock<std::mutex> lock(mu_);
  const auto free = [&] { return in_flight_ < static_cast<uint32_t>(limit_); };
  if (CurrentCancelScope() == nullptr) {
    cv_.wait(lock, free);  // nothing can cancel this thread
  } else {
    while (!cv_.wait_for(lock, std::chrono::milliseconds(kCancelCheckMs), free)) {
      if (CancelRequested()) {
        return Cancelled("cancelled while waiting for one of the host's request slots (all " +
                         std::to_string(in_flight_) + " in use)");
      }
    }
  }
  ++in_flight_;
  return Status::OK();
}

void ConcurrencyLimiter::Release(bool throttled) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    --in_flight_;
    if (throttled) {
      limit_ = std::max<double>(options_.min_in_flight, limit_ / 2);
    } else {
      limit_ = std::min<double>(options_.max_in_flight, limit_ + 1.0 / limit_);
    }
  }
  cv_.notify_all();
}

double ConcurrencyLimiter::limit() const {
  std::lock_guard<std::mutex> lock(mu_);
  return limit_;
}

uint32_t ConcurrencyLimiter::in_flight() const {
  std::lock_guard<std::mutex> lock(mu_);
  return in_flight_;
}

bool IsThrottle(const Status& status) {
  if (status.code() != StatusCode::kUnavailable) return false;
  const std::string& m = status.message();
  return m.find("SlowDown") != std::string::npos || m.find("HTTP 503") != std::string::npos ||
         m.find("HTTP 429") != std::string::npos;
}

std::string HostOf(const std::string& uri) {
  Result<ParsedUri> parsed = ParseUri(uri);
  if (!parsed.ok() || parsed->kind == UriKind::kFile) return "";
  if (parsed->kind == UriKind::kS3) return "s3://" + parsed->bucket;
  const UriParts parts = SplitUri(parsed->url);
  return std::string(parts.scheme) + "://" + std::string(parts.authority);
}

namespace {

class Limiters {
 public:
  explicit Limiters(const ConcurrencyOptions& options) : options_(options) {}
  ConcurrencyLimiter& For(const std::string& uri) {
    const std::string host = HostOf(uri);
    std::lock_guard<std::mutex> lock(mu_);
    std::unique_ptr<ConcurrencyLimiter>& limiter = by_host_[host];
    if (limiter == nullptr) limiter = std::make_unique<ConcurrencyLimiter>(options_);
    return *limiter;  // never removed, so the reference stays valid
  }

 private:
  ConcurrencyOptions options_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<ConcurrencyLimiter>> by_host_;  // guarded by mu_
};

template <typename F>
auto Bounded(ConcurrencyLimiter& limiter, const std::string& uri, F&& call) -> decltype(call()) {
  STOKER_RETURN_IF_ERROR(limiter.Acquire().WithContext(uri));
  auto result = call();
  limiter.Release(IsThrottle(result.status()));
  return result;
}

class BoundedSource final : public ByteSourceWrapper {
 public:
  BoundedSource(std::unique_ptr<ByteSource> inner, std::shared_ptr<Limiters> limiters,
                ConcurrencyLimiter* limiter)
      : ByteSourceWrapper(std::move(inner)), limiters_(std::move(limiters)), limiter_(limiter) {}
  Result<size_t> ReadAt(uint64_t offset, size_t n, char* out) const override {
    return Bounded(*limiter_, uri(), [&] { return inner().ReadAt(offset, n, out); });
  }

 private:
  std::shared_ptr<Limiters> limiters_;  // keeps limiter_ alive
  ConcurrencyLimiter* limiter_;
};

class ConcurrencyBackend final : public BackendWrapper {
 public:
  ConcurrencyBackend(std::unique_ptr<Backend> inner, const ConcurrencyOptions& options)
      : BackendWrapper(std::move(inner)), limiters_(std::make_shared<Limiters>(options)) {}

  Result<ObjectInfo> Stat(const std::string& uri) const override {
    return Bounded(limiters_->For(uri), uri, [&] { return inner().Stat(uri); });
  }
  Result<std::vector<ObjectInfo>> List(const std::string& prefix) const override {
    return Bounded(limiters_->For(prefix), prefix, [&] { return inner().List(prefix); });
  }
  Result<std::unique_ptr<ByteSource>> OpenForRead(const std::string& uri) const override {
    ConcurrencyLimiter& limiter = limiters_->For(uri);
    STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source,
                            Bounded(limiter, uri, [&] { return inner().OpenForRead(uri); }));
    return std::unique_ptr<ByteSource>(new BoundedSource(std::move(source), limiters_, &limiter));
  }
  Result<std::unique_ptr<ByteSource>> OpenForReadWithSize(const std::string& uri,
                                                          uint64_t size_bytes) const override {
    ConcurrencyLimiter& limiter = limiters_->For(uri);
    STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source,
                            inner().OpenForReadWithSize(uri, size_bytes));
    return std::unique_ptr<ByteSource>(new BoundedSource(std::move(source), limiters_, &limiter));
  }

 private:
  std::shared_ptr<Limiters> limiters_;
};

}  // namespace

std::unique_ptr<Backend> NewConcurrencyBackend(std::unique_ptr<Backend> inner,
                                               const ConcurrencyOptions& options) {
  return std::make_unique<ConcurrencyBackend>(std::move(inner), options);
}

}  // namespace stoker::storage
