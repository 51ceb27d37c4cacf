#include "storage/metering_backend.h"

#include <chrono>
#include <iterator>
#include <nlohmann/json.hpp>

namespace stoker::storage {
namespace {

using Clock = std::chrono::steady_clock;

uint64_t MicrosSince(Clock::time_point start) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count());
}

// Times `call` and counts it as one request of `kind`.
template <typename F>
auto Metered(StorageMetrics* metrics, RequestKind kind, F&& call) {
  const Clock::time_point start = Clock::now();
  auto result = call();
  metrics->AddRequest(kind, MicrosSince(start), !result.ok());
  return result;
}

class MeteredSource final : public ByteSourceWrapper {
 public:
  MeteredSource(std::unique_ptr<ByteSource> inner, StorageMetrics* metrics)
      : ByteSourceWrapper(std::move(inner)), metrics_(metrics) {}
  Result<size_t> ReadAt(uint64_t offset, size_t n, char* out) const override {
    Result<size_t> got =
        Metered(metrics_, RequestKind::kGet, [&] { return inner().ReadAt(offset, n, out); });
    if (got.ok()) metrics_->AddBytesRead(*got);
    return got;
  }

 private:
  StorageMetrics* metrics_;
};

class MeteredWriter final : public Writer {
 public:
  MeteredWriter(std::unique_ptr<Writer> inner, StorageMetrics* metrics)
      : inner_(std::move(inner)), metrics_(metrics) {}
  Status Append(std::string_view bytes) override {
    Status status = inner_->Append(bytes);
    if (status.ok()) metrics_->AddBytesWritten(bytes.size());
    return status;
  }
  Status Close() override {
    return Metered(metrics_, RequestKind::kPut, [&] { return inner_->Close(); });
  }

 private:
  std::unique_ptr<Writer> inner_;
  StorageMetrics* metrics_;
};

class MeteringBackend final : public BackendWrapper {
 public:
  MeteringBackend(std::unique_ptr<Backend> inner, StorageMetrics* metrics)
      : BackendWrapper(std::move(inner)), metrics_(metrics) {}

  Result<ObjectInfo> Stat(const std::string& uri) const override {
    return Metered(metrics_, RequestKind::kHead, [&] { return inner().Stat(uri); });
  }
  Result<std::vector<ObjectInfo>> List(const std::string& prefix) const override {
    return Metered(metrics_, RequestKind::kList, [&] { return inner().List(prefix); });
  }
  Result<std::unique_ptr<ByteSource>> OpenForRead(const std::string& uri) const override {
    // Opening a remote object asks for its size: a HEAD.
    STOKER_ASSIGN_OR_RETURN(
        std::unique_ptr<ByteSource> source,
        Metered(metrics_, RequestKind::kHead, [&] { return inner().OpenForRead(uri); }));
    return std::unique_ptr<ByteSource>(new MeteredSource(std::move(source), metrics_));
  }
  // The size is known: no HEAD (a backend whose default opens with OpenForRead asks its inner
  // backend, below this counter).
  Result<std::unique_ptr<ByteSource>> OpenForReadWithSize(const std::string& uri,
                                                          uint64_t size_bytes) const override {
    STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source,
                            inner().OpenForReadWithSize(uri, size_bytes));
    return std::unique_ptr<ByteSource>(new MeteredSource(std::move(source), metrics_));
  }
  Result<std::unique_ptr<Writer>> OpenForWrite(const std::string& uri) const override {
    STOKER_ASSIGN_OR_RETURN(std::unique_ptr<Writer> writer, inner().OpenForWrite(uri));
    return std::unique_ptr<Writer>(new MeteredWriter(std::move(writer), metrics_));
  }

 private:
  StorageMetrics* metrics_;
};

}  // namespace

const char* RequestKindName(RequestKind kind) {
  static constexpr const char* kNames[] = {"GET", "HEAD", "LIST", "PUT"};  // RequestKind's order
  static_assert(std::size(kNames) == kRequestKinds);
  const auto i = static_cast<size_t>(kind);
  return i < std::size(kNames) ? kNames[i] : "?";
}

void StorageMetrics::AddRequest(RequestKind kind, uint64_t latency_us, bool failed) {
  requests_[static_cast<int>(kind)].fetch_add(1, std::memory_order_relaxed);
  latency_us_.fetch_add(latency_us, std::memory_order_relaxed);
  if (failed) failed_.fetch_add(1, std::memory_order_relaxed);
}

StorageMetricsSnapshot StorageMetrics::Snapshot() const {
  StorageMetricsSnapshot s;
  for (int i = 0; i < kRequestKinds; ++i)
    s.requests[i] = requests_[i].load(std::memory_order_relaxed);
  s.failed_requests = failed_.load(std::memory_order_relaxed);
  s.retries = retries_.load(std::memory_order_relaxed);
  s.bytes_read = bytes_read_.load(std::memory_order_relaxed);
  s.bytes_written = bytes_written_.load(std::memory_order_relaxed);
  s.latency_us = latency_us_.load(std::memory_order_relaxed);
  return s;
}

std::string StorageMetricsSnapshot::ToJson() const {
  nlohmann::ordered_json j;
  for (int i = 0; i < kRequestKinds; ++i) {
    j["requests"][RequestKindName(static_cast<RequestKind>(i))] = requests[i];
  }
  j["failed_requests"] = failed_requests;
  j["retries"] = retries;
  j["bytes_read"] = bytes_read;
  j["bytes_written"] = bytes_written;
  j["latency_us"] = latency_us;
  return j.dump();
}

std::unique_ptr<Backend> NewMeteringBackend(std::unique_ptr<Backend> inner,
                                            StorageMetrics* metrics) {
  return std::make_unique<MeteringBackend>(std::move(inner), metrics);
}

StorageStats ToStorageStats(const StorageMetricsSnapshot& m) {
  StorageStats out;
  out.get = m.requests[static_cast<int>(RequestKind::kGet)];
  out.head = m.requests[static_cast<int>(RequestKind::kHead)];
  out.list = m.requests[static_cast<int>(RequestKind::kList)];
  out.put = m.requests[static_cast<int>(RequestKind::kPut)];
  out.failed = m.failed_requests;
  out.retries = m.retries;
  out.bytes_read = m.bytes_read;
  out.request_us = m.latency_us;
  return out;
}

void MetricsSet::Add(std::shared_ptr<const StorageMetrics> metrics) {
  if (metrics == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (seen_.insert(metrics.get()).second) all_.push_back(std::move(metrics));
}

StorageStats MetricsSet::Total() const {
  std::lock_guard<std::mutex> lock(mu_);
  StorageStats total;
  for (const auto& m : all_) total += ToStorageStats(m->Snapshot());
  return total;
}

}  // namespace stoker::storage
