// HttpClient: blocking HTTP(S) requests through libcurl, with a pool of easy handles so that
// connections (and TLS sessions) are reused across requests and threads. A response body goes
// into a string or straight into the caller's buffer, never past `max_body_bytes`: a longer body
// is an error, not a silent overrun. The body of a non-2xx answer always goes to the string.
// Transport failures (refused, reset, timeout, a body cut short) are kUnavailable; HTTP status
// codes are left to the caller (see StatusForHttp). A request made under a cancelled CancelScope
// (cancel.h) is kCancelled: not sent, or aborted in flight within about a second.
// Thread-safe: any number of threads may call Perform at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "stoker/status.h"

namespace stoker::storage {

class StorageMetrics;

struct HttpRequest {
  std::string method = "GET";  // GET, HEAD, PUT, POST, DELETE
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string_view body;     // PUT / POST; must stay alive during Perform
  char* body_out = nullptr;  // if set, the body is written here (at most max_body_bytes)
  size_t max_body_bytes = std::numeric_limits<size_t>::max();
};

struct HttpResponse {
  long status = 0;
  std::map<std::string, std::string> headers;  // lower-case names, of the final response
  // The body; for a request with body_out, only a non-2xx answer's body (its first 64 KiB),
  // which never goes to body_out.
  std::string body;
  size_t body_bytes = 0;  // bytes of a 2xx body received, wherever they went
  // The value of header `name` (lower-case), or "".
  std::string Header(const std::string& name) const;
};

// $STOKER_STALL_TIMEOUT_S when it is a positive number of seconds, else 30: how long a transfer
// may move less than 1 byte/s before it is a timeout (kUnavailable, retried).
long StallTimeoutFromEnv();

struct HttpClientOptions {
  long connect_timeout_ms = 10000;
  long stall_timeout_s = StallTimeoutFromEnv();  // a transfer slower than 1 byte/s this long fails
  long max_redirects = 5;                        // 0: redirects are not followed
  size_t max_pooled_handles = 32;
  // If set, every HTTP request is counted here (metering_backend.h): kind (HEAD; GET; a
  // ListObjectsV2 GET as LIST; PUT, POST and DELETE as PUT), latency, failure (transport error or
  // non-2xx), bytes of 2xx GET bodies and PUT bodies. Must outlive the client.
  StorageMetrics* metrics = nullptr;
};

class HttpClient {
 public:
  explicit HttpClient(HttpClientOptions options = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends `request`. Any HTTP status is a response; kUnavailable for transport failures, and
  // kIOError for a body longer than max_body_bytes. Errors name the method and the URL.
  Result<HttpResponse> Perform(const HttpRequest& request) const;

 private:
  Result<HttpResponse> PerformOnce(const HttpRequest& request) const;
  void* Acquire() const;
  void Release(void* handle) const;

  HttpClientOptions options_;
  mutable std::mutex mu_;
  mutable std::vector<void*> pool_;  // CURL* handles, guarded by mu_
};

// The total size in a 206 answer's Content-Range ("bytes 0-99/12345"), checked against the size
// the caller opened the object with: kCorruption naming `what` when they differ (the object
// changed since the manifest was written). A missing or "*" total passes.
Status CheckRangeTotal(const std::string& what, const std::string& content_range,
                       uint64_t expected_size);

// `url` with any "user:password@" replaced by "<redacted>@", for messages.
std::string WithoutUserinfo(const std::string& url);

// The Status for a non-2xx response: 5xx, 429 and 408 are kUnavailable (retried), 404
// kNotFound, 401/403 kFailedPrecondition (credentials), 416 kOutOfRange, others kIOError.
// The message is "<what>: HTTP <status> <detail>".
Status StatusForHttp(const std::string& what, long status, const std::string& detail);

}  // namespace stoker::storage
