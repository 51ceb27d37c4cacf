#include "storage/http_backend.h"

#include "common/uri.h"
#include "storage/http_client.h"

namespace stoker::storage {
namespace {

Status CheckHttpUri(const std::string& uri) {
  STOKER_ASSIGN_OR_RETURN(ParsedUri parsed, ParseUri(uri));
  if (parsed.kind != UriKind::kHttp) {
    return InvalidArgument(uri + ": the HTTP backend serves http:// and https:// URIs only");
  }
  return Status::OK();
}

Status FetchRange(const HttpClient& http, const std::string& url, uint64_t size, uint64_t offset,
                  size_t n, char* out) {
  const std::string range = std::to_string(offset) + "-" + std::to_string(offset + n - 1);
  HttpRequest request;
  request.url = url;
  request.headers = {{"Range", "bytes=" + range}};
  request.body_out = out;
  request.max_body_bytes = n;
  const std::string what = WithoutUserinfo(url) + ": GET bytes " + range;
  Result<HttpResponse> response = http.Perform(request);
  if (!response.ok()) {
    // A server ignoring Range sends the whole object: longer than asked, which the client
    // refuses as an overflow. Say what that means.
    if (response.status().code() == StatusCode::kIOError) {
      return FailedPrecondition(what +
                                ": the server ignores Range requests (it sent more than "
                                "the bytes asked for); stoker needs a server that supports them");
    }
    return response.status();
  }
  const HttpResponse& r = *response;
  if (r.status == 200) {
    if (offset != 0 || n != size) {
      return FailedPrecondition(
          what +
          ": the server ignores Range requests (HTTP 200 instead "
          "of 206 Partial Content); stoker needs a server that supports them");
    }
  } else if (r.status == 206) {
    const std::string content_range = r.Header("content-range");
    if (content_range.rfind("bytes " + range + "/", 0) != 0) {
      return IOError(what + ": the server answered Content-Range '" + content_range + "'");
    }
    STOKER_RETURN_IF_ERROR(CheckRangeTotal(what, content_range, size));
  } else {
    return StatusForHttp(what, r.status, "");
  }
  if (r.body_bytes != n) {
    return Unavailable(what + ": short body (" + std::to_string(r.body_bytes) + " of " +
                       std::to_string(n) + " bytes)");
  }
  return Status::OK();
}

HttpClientOptions ClientOptions(const HttpBackendOptions& options) {
  HttpClientOptions http;
  http.metrics = options.metrics;
  http.stall_timeout_s = options.stall_timeout_s;
  return http;
}

class HttpBackend final : public Backend {
 public:
  explicit HttpBackend(const HttpBackendOptions& options)
      : options_(options), http_(std::make_shared<HttpClient>(ClientOptions(options))) {}

  Result<ObjectInfo> Stat(const std::string& uri) const override {
    STOKER_RETURN_IF_ERROR(CheckHttpUri(uri));
    HttpRequest request;
    request.method = "HEAD";
    request.url = uri;
    STOKER_ASSIGN_OR_RETURN(HttpResponse r, http_->Perform(request));
    if (r.status < 200 || r.status >= 300) {
      return StatusForHttp("HEAD " + WithoutUserinfo(uri), r.status, "");
    }
    const std::string length = r.Header("content-length");
    if (length.empty() || length.find_first_not_of("0123456789") != std::string::npos) {
      return IOError("HEAD " + WithoutUserinfo(uri) +
                     ": no Content-Length; stoker needs the size of the object");
    }
    return ObjectInfo{uri, std::stoull(length), UnquoteEtag(r.Header("etag"))};
  }

  Result<std::vector<ObjectInfo>> List(const std::string& prefix) const override {
    return Unimplemented(prefix + ": http:// and https:// cannot be listed; name each object");
  }

  Result<std::unique_ptr<ByteSource>> OpenForRead(const std::string& uri) const override {
    STOKER_ASSIGN_OR_RETURN(ObjectInfo info, Stat(uri));
    return OpenForReadWithSize(uri, info.size_bytes);
  }

  Result<std::unique_ptr<ByteSource>> OpenForReadWithSize(const std::string& uri,
                                                          uint64_t size) const override {
    STOKER_RETURN_IF_ERROR(CheckHttpUri(uri));
    std::shared_ptr<const HttpClient> http = http_;
    return NewRangedSource(WithoutUserinfo(uri), size, options_.part_bytes,
                           [http, uri, size](uint64_t offset, size_t n, char* out) {
                             return FetchRange(*http, uri, size, offset, n, out);
                           });
  }

  Result<std::unique_ptr<Writer>> OpenForWrite(const std::string& uri) const override {
    return Unimplemented(WithoutUserinfo(uri) + ": http:// and https:// are read-only in stoker");
  }

 private:
  HttpBackendOptions options_;
  std::shared_ptr<HttpClient> http_;
};

}  // namespace

std::unique_ptr<Backend> NewHttpBackend(const HttpBackendOptions& options) {
  return std::make_unique<HttpBackend>(options);
}

}  // namespace stoker::storage
