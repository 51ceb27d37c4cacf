// Cancellation of requests in flight (cancel.h): an HTTP transfer that a server leaves stalled is
// aborted inside libcurl once its thread's scope is cancelled, a cancelled request is neither
// sent nor retried, and the retry loop's backoff sleep ends early.
#include "storage/cancel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "storage/http_client.h"
#include "storage/open_backend.h"
#include "storage/retry_backend.h"
#include "storage/stall_server_testing.h"

namespace stoker::storage {
namespace {

using testing::StallingHttpServer;

// Long enough that a test which waited it out instead of cancelling would show (by its request
// counts, and by taking minutes), short enough that it still ends.
constexpr long kStallTimeoutS = 20;

TEST(CancelScopeTest, NestsAndUnwinds) {
  EXPECT_FALSE(CancelRequested());
  EXPECT_EQ(CurrentCancelScope(), nullptr);
  std::atomic<bool> outer_flag{false}, inner_flag{false};
  {
    const CancelScope outer(&outer_flag);
    {
      const CancelScope inner(&inner_flag);
      const CancelScope none(nullptr);
      EXPECT_FALSE(CancelRequested());
      outer_flag = true;  // an outer scope's flag stops the inner ones too
      EXPECT_TRUE(CancelRequested());
      outer_flag = false;
      inner_flag = true;
      EXPECT_TRUE(CancelRequested());
    }
    EXPECT_FALSE(CancelRequested());
    EXPECT_EQ(CurrentCancelScope(), &outer);
    // A helper thread given this thread's scopes sees their flags.
    const CancelScope* mine = CurrentCancelScope();
    bool seen = false;
    outer_flag = true;
    std::thread([&] {
      EXPECT_FALSE(CancelRequested());  // scopes are per thread
      const CancelScope helper(nullptr, mine);
      seen = CancelRequested();
    }).join();
    EXPECT_TRUE(seen);
  }
  EXPECT_EQ(CurrentCancelScope(), nullptr);
}

TEST(CancelTest, AStalledTransferIsAbortedInFlight) {
  StallingHttpServer server;
  ASSERT_NE(server.port(), 0);
  HttpClientOptions options;
  options.stall_timeout_s = kStallTimeoutS;
  HttpClient client(options);
  std::atomic<bool> cancel{false};
  Result<HttpResponse> got = Internal("not run");
  std::thread t([&] {
    const CancelScope scope(&cancel);
    HttpRequest request;
    request.url = server.url("/stalled.bin");
    got = client.Perform(request);
  });
  ASSERT_TRUE(server.WaitForRequests(1));  // sent, and left unanswered
  cancel = true;
  t.join();
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kCancelled) << got.status().ToString();
  EXPECT_NE(got.status().message().find("/stalled.bin"), std::string::npos);
  EXPECT_EQ(server.requests(), 1);
}

TEST(CancelTest, ARequestOfACancelledThreadIsNotSent) {
  StallingHttpServer server;
  ASSERT_NE(server.port(), 0);
  HttpClient client;
  std::atomic<bool> cancel{true};
  const CancelScope scope(&cancel);
  HttpRequest request;
  request.url = server.url("/never");
  Result<HttpResponse> got = client.Perform(request);
  EXPECT_EQ(got.status().code(), StatusCode::kCancelled);
  EXPECT_EQ(server.requests(), 0);
}

// Through the decorators a loader uses (retry, metering, concurrency): the read is aborted and
// not retried, where a timeout would have been retried max_attempts times.
TEST(CancelTest, ARangedReadOverHttpIsCancelledAndNotRetried) {
  StallingHttpServer server;
  ASSERT_NE(server.port(), 0);
  StorageMetrics metrics;
  BackendOptions options;
  options.http.stall_timeout_s = kStallTimeoutS;
  options.metrics = &metrics;
  auto backend = OpenBackendForUri(server.url("/"), options);
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  auto source = (*backend)->OpenForReadWithSize(server.url("/part.bin"), 1000);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  std::atomic<bool> cancel{false};
  Result<size_t> got = Internal("not run");
  std::thread t([&] {
    const CancelScope scope(&cancel);
    std::string out(1000, '\0');
    got = (*source)->ReadAt(0, out.size(), out.data());
  });
  ASSERT_TRUE(server.WaitForRequests(1));
  cancel = true;
  t.join();
  EXPECT_EQ(got.status().code(), StatusCode::kCancelled) << got.status().ToString();
  EXPECT_EQ(server.requests(), 1);
  EXPECT_EQ(metrics.Snapshot().retries, 0u);
}

// A backoff sleep in progress ends when the thread is cancelled, and the request is not tried
// again: with a ten-minute backoff, only the cancellation can end this test.
TEST(CancelTest, BackoffSleepEndsEarlyAndTheCallIsNotRepeated) {
  RetryOptions options;
  options.max_attempts = 3;
  options.base_delay_ms = 600000;
  options.max_delay_ms = 600000;
  options.seed = 5;
  Backoff backoff(options);
  std::atomic<bool> cancel{false};
  std::atomic<int> calls{0};
  Status result;
  std::thread t([&] {
    const CancelScope scope(&cancel);
    result = backoff.Run([&] {
      ++calls;
      return Unavailable("GET x: HTTP 503 SlowDown");
    });
  });
  while (calls.load() == 0) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // well into the sleep
  cancel = true;
  t.join();
  EXPECT_EQ(result.code(), StatusCode::kCancelled) << result.ToString();
  EXPECT_NE(result.message().find("SlowDown"), std::string::npos);
  EXPECT_EQ(calls.load(), 1);
}

}  // namespace
}  // namespace stoker::storage
