#include <gtest/gtest.h>

#include "storage/fault_backend.h"
#include "storage/memory_backend.h"
#include "storage/metering_backend.h"
#include "storage/retry_backend.h"

namespace stoker::storage {
namespace {

std::unique_ptr<Backend> MemoryWith(const std::string& name, const std::string& bytes) {
  std::unique_ptr<Backend> backend = NewMemoryBackend();
  EXPECT_TRUE(WriteAll(*backend, name, bytes).ok());
  return backend;
}

RetryOptions FastRetry(int attempts, StorageMetrics* metrics = nullptr) {
  RetryOptions r;
  r.max_attempts = attempts;
  r.base_delay_ms = 1;
  r.max_delay_ms = 2;
  r.seed = 3;
  r.metrics = metrics;
  return r;
}

TEST(FaultBackendTest, FailsTheNthRequestAsUnavailable) {
  FaultOptions faults;
  faults.fail_nth = 2;
  FaultCounts counts;
  auto backend = NewFaultBackend(MemoryWith("k", "hello"), faults, &counts);
  EXPECT_TRUE(backend->Stat("k").ok());
  Status second = backend->Stat("k").status();
  EXPECT_EQ(second.code(), StatusCode::kUnavailable);
  EXPECT_NE(second.message().find("injected fault"), std::string::npos);
  EXPECT_TRUE(backend->Stat("k").ok());
  EXPECT_EQ(counts.requests.load(), 3u);
  EXPECT_EQ(counts.failed.load(), 1u);
}

TEST(FaultBackendTest, TruncatesAndFlipsBodies) {
  FaultOptions truncate;
  truncate.truncate_fraction = 1.0;
  auto t = NewFaultBackend(MemoryWith("k", "0123456789"), truncate);
  std::string out(10, '\0');
  EXPECT_EQ(t->OpenForRead("k").value()->ReadAt(0, 10, out.data()).value(), 5u);

  FaultOptions flip;
  flip.flip_fraction = 1.0;
  auto f = NewFaultBackend(MemoryWith("k", "0123456789"), flip);
  EXPECT_EQ(f->OpenForRead("k").value()->ReadAt(0, 10, out.data()).value(), 10u);
  EXPECT_NE(out, "0123456789");
}

TEST(FaultBackendTest, SameSeedSameFaults) {
  auto run = [](uint64_t seed) {
    FaultOptions faults;
    faults.seed = seed;
    faults.fail_fraction = 0.5;
    auto backend = NewFaultBackend(MemoryWith("k", "x"), faults);
    std::string pattern;
    for (int i = 0; i < 64; ++i) pattern += backend->Stat("k").ok() ? '.' : 'F';
    return pattern;
  };
  EXPECT_EQ(run(5), run(5));
  EXPECT_NE(run(5), run(6));
}

TEST(RetryBackendTest, RetriesUnavailableAndShortReadsToTheSameBytes) {
  const std::string bytes(100000, 'z');
  FaultOptions faults;
  faults.fail_fraction = 0.3;
  faults.truncate_fraction = 0.3;
  StorageMetrics metrics;
  auto backend =
      NewRetryBackend(NewMeteringBackend(NewFaultBackend(MemoryWith("k", bytes), faults), &metrics),
                      FastRetry(30, &metrics));
  Result<std::unique_ptr<ByteSource>> source = backend->OpenForRead("k");
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  for (uint64_t offset = 0; offset < bytes.size(); offset += 7000) {
    std::string out(7000, '\0');
    Result<size_t> got = (*source)->ReadAt(offset, 7000, out.data());
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(out.substr(0, *got), bytes.substr(offset, 7000));
  }
  const StorageMetricsSnapshot s = metrics.Snapshot();
  EXPECT_GT(s.retries, 0u);
  EXPECT_GT(s.requests[static_cast<int>(RequestKind::kGet)], 15u);  // 15 reads, plus retries
  EXPECT_GT(s.failed_requests, 0u);
}

TEST(RetryBackendTest, GivesUpAfterMaxAttemptsAndSaysSo) {
  FaultOptions faults;
  faults.fail_fraction = 1.0;
  StorageMetrics metrics;
  auto backend =
      NewRetryBackend(NewFaultBackend(MemoryWith("k", "x"), faults), FastRetry(4, &metrics));
  Status status = backend->Stat("k").status();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_NE(status.message().find("after 4 attempts"), std::string::npos) << status.ToString();
  EXPECT_EQ(metrics.Snapshot().retries, 3u);
}

class CorruptOnce final : public BackendWrapper {
 public:
  using BackendWrapper::BackendWrapper;
  Result<ObjectInfo> Stat(const std::string& uri) const override {
    ++calls;
    return Corruption(uri + ": bad");
  }
  mutable int calls = 0;
};

TEST(RetryBackendTest, NeverRetriesCorruptionOrNotFound) {
  auto inner = std::make_unique<CorruptOnce>(NewMemoryBackend());
  CorruptOnce* raw = inner.get();
  auto backend = NewRetryBackend(std::move(inner), FastRetry(5));
  EXPECT_EQ(backend->Stat("k").status().code(), StatusCode::kCorruption);
  EXPECT_EQ(raw->calls, 1);
  auto plain = NewRetryBackend(NewMemoryBackend(), FastRetry(5));
  EXPECT_EQ(plain->Stat("absent").status().code(), StatusCode::kNotFound);
}

TEST(RetryBackendTest, BackoffIsFullJitterOverACappedExponential) {
  RetryOptions r;
  r.base_delay_ms = 100;
  r.max_delay_ms = 1000;
  EXPECT_EQ(BackoffDelayMs(r, 1, 0.0), 0u);
  EXPECT_EQ(BackoffDelayMs(r, 1, 0.9999), 100u);
  EXPECT_EQ(BackoffDelayMs(r, 3, 0.5), 200u);
  EXPECT_EQ(BackoffDelayMs(r, 20, 0.9999), 1000u);
}

TEST(MeteringBackendTest, CountsRequestsByKindAndBytes) {
  StorageMetrics metrics;
  auto backend = NewMeteringBackend(NewMemoryBackend(), &metrics);
  ASSERT_TRUE(WriteAll(*backend, "a", "12345").ok());
  ASSERT_TRUE(backend->Stat("a").ok());
  ASSERT_TRUE(backend->List("").ok());
  ASSERT_EQ(ReadAll(*backend, "a").value(), "12345");
  EXPECT_EQ(backend->Stat("b").status().code(), StatusCode::kNotFound);
  const StorageMetricsSnapshot s = metrics.Snapshot();
  EXPECT_EQ(s.requests[static_cast<int>(RequestKind::kPut)], 1u);
  EXPECT_EQ(s.requests[static_cast<int>(RequestKind::kHead)], 3u);  // Stat, Stat, OpenForRead
  EXPECT_EQ(s.requests[static_cast<int>(RequestKind::kList)], 1u);
  EXPECT_EQ(s.requests[static_cast<int>(RequestKind::kGet)], 1u);
  EXPECT_EQ(s.bytes_written, 5u);
  EXPECT_EQ(s.bytes_read, 5u);
  EXPECT_EQ(s.failed_requests, 1u);
  EXPECT_NE(s.ToJson().find("\"GET\":1"), std::string::npos) << s.ToJson();
}

}  // namespace
}  // namespace stoker::storage
