#include "storage/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "storage/cancel.h"
#include "storage/metering_backend.h"

namespace stoker::storage {
namespace {

struct Transfer {
  CURL* curl;
  const HttpRequest* request;
  HttpResponse* response;
  size_t read_offset = 0;  // of request->body, for uploads
  bool overflow = false;
};

constexpr size_t kMaxErrorBodyBytes = 64 << 10;
constexpr long kReceiveBufferBytes = 256 << 10;

size_t OnBody(char* data, size_t size, size_t nmemb, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * nmemb;
  long status = 0;
  curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
  if (status < 200 || status >= 300) {
    // An error answer (S3's XML, a proxy's page) is not the range asked for: keep its start in
    // `body` for the message, whatever the caller's buffer size.
    const size_t room = kMaxErrorBodyBytes - std::min(kMaxErrorBodyBytes, t->response->body.size());
    t->response->body.append(data, std::min(n, room));
    return n;
  }
  if (n > t->request->max_body_bytes - t->response->body_bytes) {
    t->overflow = true;
    return 0;  // aborts the transfer
  }
  if (t->request->body_out != nullptr) {
    std::memcpy(t->request->body_out + t->response->body_bytes, data, n);
  } else {
    t->response->body.append(data, n);
  }
  t->response->body_bytes += n;
  return n;
}

size_t OnHeader(char* data, size_t size, size_t nmemb, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * nmemb;
  std::string_view line(data, n);
  if (line.rfind("HTTP/", 0) == 0) {
    t->response->headers.clear();  // a new response (after a redirect or a 100 Continue)
    return n;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return n;
  std::string name(line.substr(0, colon));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) {
    value.remove_suffix(1);
  }
  t->response->headers[name] = std::string(value);
  return n;
}

size_t OnUpload(char* buffer, size_t size, size_t nmemb, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::string_view body = t->request->body;
  const size_t n = std::min(size * nmemb, body.size() - t->read_offset);
  std::memcpy(buffer, body.data() + t->read_offset, n);
  t->read_offset += n;
  return n;
}

// Called by libcurl often while data moves and about once a second while none does: a nonzero
// return aborts the transfer (CURLE_ABORTED_BY_CALLBACK). Runs on the thread that performs it.
int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<const CancelScope*>(user)->cancelled() ? 1 : 0;
}

// What one HTTP request counts as: a ListObjectsV2 page is a LIST, PUT/POST/DELETE (the upload
// calls and their abort) are writes.
RequestKind KindOf(const HttpRequest& request) {
  if (request.method == "HEAD") return RequestKind::kHead;
  if (request.method == "GET") {
    return request.url.find("list-type=2") != std::string::npos ? RequestKind::kList
                                                                : RequestKind::kGet;
  }
  return RequestKind::kPut;
}

// The reason phrase of an HTTP status, or "" for one not listed.
const char* ReasonPhrase(long status) {
  static constexpr std::pair<long, const char*> kPhrases[] = {
      {400, "Bad Request"},         {401, "Unauthorized"},          {403, "Forbidden"},
      {404, "Not Found"},           {408, "Request Timeout"},       {416, "Range Not Satisfiable"},
      {429, "Too Many Requests"},   {500, "Internal Server Error"}, {502, "Bad Gateway"},
      {503, "Service Unavailable"}, {504, "Gateway Timeout"},
  };
  for (const auto& [code, phrase] : kPhrases) {
    if (code == status) return phrase;
  }
  return "";
}

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace

long StallTimeoutFromEnv() {
  const char* v = std::getenv("STOKER_STALL_TIMEOUT_S");
  if (v == nullptr || *v == '\0') return 30;
  char* end = nullptr;
  const long s = std::strtol(v, &end, 10);
  return *end == '\0' && s > 0 ? s : 30;
}

std::string HttpResponse::Header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? "" : it->second;
}

HttpClient::HttpClient(HttpClientOptions options) : options_(options) { GlobalInit(); }

HttpClient::~HttpClient() {
  for (void* h : pool_) curl_easy_cleanup(static_cast<CURL*>(h));
}

void* HttpClient::Acquire() const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!pool_.empty()) {
      void* h = pool_.back();
      pool_.pop_back();
      return h;
    }
  }
  return curl_easy_init();
}

void HttpClient::Release(void* handle) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (pool_.size() < options_.max_pooled_handles) {
    pool_.push_back(handle);
  } else {
    curl_easy_cleanup(static_cast<CURL*>(handle));
  }
}

std::string WithoutUserinfo(const std::string& url) {
  const size_t start = url.find("://");
  if (start == std::string::npos) return url;
  const size_t end = url.find_first_of("/?#", start + 3);
  const size_t at = url.rfind('@', end == std::string::npos ? url.size() : end);
  if (at == std::string::npos || at < start) return url;
  return url.substr(0, start + 3) + "<redacted>" + url.substr(at);
}

Result<HttpResponse> HttpClient::Perform(const HttpRequest& request) const {
  if (options_.metrics == nullptr) return PerformOnce(request);
  const auto start = std::chrono::steady_clock::now();
  Result<HttpResponse> r = PerformOnce(request);
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  const bool failed = !r.ok() || r->status < 200 || r->status >= 300;
  options_.metrics->AddRequest(KindOf(request), static_cast<uint64_t>(us), failed);
  if (!failed) {
    if (request.method == "GET") options_.metrics->AddBytesRead(r->body_bytes);
    if (request.method == "PUT") options_.metrics->AddBytesWritten(request.body.size());
  }
  return r;
}

Result<HttpResponse> HttpClient::PerformOnce(const HttpRequest& request) const {
  const std::string what = request.method + " " + WithoutUserinfo(request.url);
  const CancelScope* cancel = CurrentCancelScope();
  if (cancel != nullptr && cancel->cancelled()) return Cancelled(what + ": cancelled");
  CURL* curl = static_cast<CURL*>(Acquire());
  if (curl == nullptr) return Internal(what + ": curl_easy_init failed");
  curl_easy_reset(curl);  // keeps the connection cache of this handle
  HttpResponse response;
  Transfer transfer{curl, &request, &response};
  struct curl_slist* headers = nullptr;
  for (const auto& [name, value] : request.headers) {
    headers = curl_slist_append(headers, (name + ": " + value).c_str());
  }
  headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  // Bodies of 8 MiB parts: 256 KiB per receive and callback instead of curl's 16 KiB.
  curl_easy_setopt(curl, CURLOPT_BUFFERSIZE, kReceiveBufferBytes);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, options_.connect_timeout_ms);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, options_.stall_timeout_s);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &transfer);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &transfer);
  if (cancel != nullptr) {
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, OnProgress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, cancel);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  }
  if (options_.max_redirects > 0) {
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(curl, CURLOPT_MAXREDIRS, options_.max_redirects);
  }
  if (request.method == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else if (request.method == "PUT") {
    curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, OnUpload);
    curl_easy_setopt(curl, CURLOPT_READDATA, &transfer);
    curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  } else if (request.method == "POST") {
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(request.body.size()));
  } else if (request.method != "GET") {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }
  const CURLcode code = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  curl_slist_free_all(headers);
  if (code != CURLE_OK) {
    // A handle whose transfer failed may hold a broken connection: do not pool it.
    curl_easy_cleanup(curl);
    if (transfer.overflow) {
      return IOError(what + ": response body longer than the " +
                     std::to_string(request.max_body_bytes) + " bytes asked for");
    }
    if (code == CURLE_ABORTED_BY_CALLBACK) return Cancelled(what + ": cancelled in flight");
    return Unavailable(what + ": " + curl_easy_strerror(code));
  }
  Release(curl);
  return response;
}

Status CheckRangeTotal(const std::string& what, const std::string& content_range,
                       uint64_t expected_size) {
  const size_t slash = content_range.rfind('/');
  if (slash == std::string::npos || slash + 1 >= content_range.size()) return Status::OK();
  const std::string total = content_range.substr(slash + 1);
  if (total.find_first_not_of("0123456789") != std::string::npos) return Status::OK();  // "*"
  if (std::stoull(total) == expected_size) return Status::OK();
  return Corruption(what + ": the object is " + total + " bytes, not the " +
                    std::to_string(expected_size) + " it was opened with (it changed since)");
}

Status StatusForHttp(const std::string& what, long status, const std::string& detail) {
  std::string message = what + ": HTTP " + std::to_string(status);
  const std::string shown = detail.empty() ? ReasonPhrase(status) : detail;
  if (!shown.empty()) message += " " + shown;
  if (status >= 500 || status == 429 || status == 408) return Unavailable(message);
  if (status == 404) return NotFound(message);
  if (status == 401 || status == 403) return FailedPrecondition(message);
  if (status == 416) return OutOfRange(message);
  return IOError(message);
}

}  // namespace stoker::storage
