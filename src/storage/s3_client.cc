#include "storage/s3_client.h"

#include <algorithm>
#include <cctype>

#include "common/escape.h"
#include "common/uri.h"
#include "storage/sigv4.h"

namespace stoker::storage {

S3Client::S3Client(AwsConfig config, S3Addressing addressing, HttpClientOptions http)
    : config_(std::move(config)), addressing_(addressing), http_(http) {
  std::string endpoint = config_.endpoint;
  if (endpoint.empty()) endpoint = "https://s3." + config_.region + ".amazonaws.com";
  if (endpoint.find("://") == std::string::npos) endpoint = "https://" + endpoint;
  const UriParts parts = SplitUri(endpoint);
  scheme_ = std::string(parts.scheme);
  host_ = std::string(parts.authority);
  base_path_ = std::string(parts.path);
  while (!base_path_.empty() && base_path_.back() == '/') base_path_.pop_back();
}

bool S3Client::VirtualHosted(const std::string& bucket) const {
  if (addressing_ == S3Addressing::kPath) return false;
  if (addressing_ == S3Addressing::kVirtual) return true;
  if (!config_.endpoint.empty()) return false;
  // A bucket name that is not a plain DNS label (dots break TLS wildcards) goes path-style.
  return std::ranges::all_of(
      bucket, [](unsigned char c) { return std::islower(c) || std::isdigit(c) || c == '-'; });
}

std::string S3Client::ObjectUrl(const std::string& bucket, const std::string& key) const {
  const std::string encoded_key = UriEncode(key, /*keep_slash=*/true);
  if (VirtualHosted(bucket))
    return scheme_ + "://" + bucket + "." + host_ + base_path_ + "/" + encoded_key;
  return scheme_ + "://" + host_ + base_path_ + "/" + bucket +
         (key.empty() ? "" : "/" + encoded_key);
}

std::string S3Client::Scrub(std::string text) const {
  for (const std::string* secret : {&config_.secret_access_key, &config_.session_token}) {
    if (secret->empty()) continue;
    for (size_t pos; (pos = text.find(*secret)) != std::string::npos;)
      text.replace(pos, secret->size(), "<redacted>");
  }
  return text;
}

Result<HttpResponse> S3Client::Send(const Call& call) const {
  const std::string uri = "s3://" + call.bucket + (call.key.empty() ? "" : "/" + call.key);
  const std::string url = ObjectUrl(call.bucket, call.key);
  const UriParts parts = SplitUri(url);
  const std::string host(parts.authority);
  const std::string amz_date = AmzDateNow();

  SigningRequest signing;
  signing.method = call.method;
  signing.canonical_uri = std::string(parts.path);
  signing.query = call.query;
  signing.payload_sha256 = Sha256Hex(call.body);
  signing.headers = call.headers;
  signing.headers.emplace_back("host", host);
  signing.headers.emplace_back("x-amz-content-sha256", signing.payload_sha256);
  signing.headers.emplace_back("x-amz-date", amz_date);
  if (!config_.session_token.empty()) {
    signing.headers.emplace_back("x-amz-security-token", config_.session_token);
  }
  const SigningKeyParts key{config_.access_key_id, config_.secret_access_key, config_.region, "s3"};

  HttpRequest request;
  request.method = call.method;
  request.url = url;
  const std::string query = CanonicalQueryString(call.query);
  if (!query.empty()) request.url += "?" + query;
  for (const auto& h : signing.headers) {
    if (h.first != "host") request.headers.push_back(h);
  }
  request.headers.emplace_back("Authorization", AuthorizationHeader(signing, key, amz_date));
  if (call.method == "PUT" || call.method == "POST")
    request.headers.emplace_back("Content-Type", "");
  request.body = call.body;
  request.body_out = call.body_out;
  request.max_body_bytes = call.max_body_bytes;

  Result<HttpResponse> response = http_.Perform(request);
  if (!response.ok()) {
    return Status(response.status().code(), Scrub(uri + ": " + response.status().message()));
  }
  if (response->status < 200 || response->status >= 300) {
    const std::string& body = response->body;
    std::string detail = XmlValue(body, "Code").value_or("");
    const std::string message = XmlValue(body, "Message").value_or("");
    if (!message.empty()) detail += (detail.empty() ? "" : ": ") + message;
    if (response->status == 403) {
      // A HEAD answer has no body to say why: name what to check.
      if (detail.empty()) detail = "Forbidden (a wrong secret, or no permission on this object)";
      detail += " (" + config_.ToString() + "; check the key, the secret and the region)";
    }
    if (call.if_none_match && response->status == 412) {
      return AlreadyExists(Scrub(call.method + " " + uri) + ": an object is already there");
    }
    if (call.if_none_match && response->status == 409) {
      return Unavailable(Scrub(call.method + " " + uri) + ": HTTP 409 " + Scrub(detail));
    }
    return StatusForHttp(Scrub(call.method + " " + uri), response->status, Scrub(detail));
  }
  return response;
}

Result<ObjectInfo> S3Client::Head(const std::string& bucket, const std::string& key) const {
  STOKER_ASSIGN_OR_RETURN(HttpResponse r, Send({"HEAD", bucket, key}));
  const std::string length = r.Header("content-length");
  if (length.empty())
    return IOError("s3://" + bucket + "/" + key + ": HEAD gave no Content-Length");
  return ObjectInfo{"s3://" + bucket + "/" + key, std::stoull(length),
                    UnquoteEtag(r.Header("etag"))};
}

Status S3Client::GetRange(const std::string& bucket, const std::string& key, uint64_t offset,
                          size_t n, char* out, uint64_t object_size) const {
  Call call{"GET", bucket, key};
  call.headers.emplace_back(
      "range", "bytes=" + std::to_string(offset) + "-" + std::to_string(offset + n - 1));
  call.body_out = out;
  call.max_body_bytes = n;
  STOKER_ASSIGN_OR_RETURN(HttpResponse r, Send(call));
  const std::string where = "s3://" + bucket + "/" + key + ": GET bytes " + std::to_string(offset) +
                            "-" + std::to_string(offset + n - 1);
  if (r.status != 206 && !(r.status == 200 && offset == 0)) {
    return IOError(where + ": expected HTTP 206 Partial Content, got " + std::to_string(r.status));
  }
  if (object_size > 0 && r.status == 206) {
    STOKER_RETURN_IF_ERROR(CheckRangeTotal(where, r.Header("content-range"), object_size));
  }
  if (r.body_bytes != n) {
    return Unavailable(where + ": short body (" + std::to_string(r.body_bytes) + " of " +
                       std::to_string(n) + " bytes)");
  }
  return Status::OK();
}

Result<S3ListPage> S3Client::ListPage(const std::string& bucket, const std::string& prefix,
                                      const std::string& continuation_token, int max_keys) const {
  Call call{"GET", bucket, ""};
  call.query = {{"list-type", "2"}, {"prefix", prefix}, {"max-keys", std::to_string(max_keys)}};
  if (!continuation_token.empty())
    call.query.emplace_back("continuation-token", continuation_token);
  STOKER_ASSIGN_OR_RETURN(HttpResponse r, Send(call));
  std::optional<S3ListPage> page = ParseListObjectsV2(r.body);
  if (!page)
    return Corruption("s3://" + bucket + "/" + prefix + ": malformed ListObjectsV2 answer");
  return std::move(*page);
}

Status S3Client::PutObject(const std::string& bucket, const std::string& key,
                           std::string_view body) const {
  Call call{"PUT", bucket, key};
  call.body = body;
  return Send(call).status();
}

Status S3Client::PutObjectIfAbsent(const std::string& bucket, const std::string& key,
                                   std::string_view body) const {
  Call call{"PUT", bucket, key};
  call.body = body;
  call.headers.emplace_back("if-none-match", "*");
  call.if_none_match = true;
  return Send(call).status();
}

Status S3Client::DeleteObject(const std::string& bucket, const std::string& key) const {
  Status st = Send({"DELETE", bucket, key}).status();
  return st.code() == StatusCode::kNotFound ? Status::OK() : st;
}

Result<std::string> S3Client::CreateMultipartUpload(const std::string& bucket,
                                                    const std::string& key) const {
  Call call{"POST", bucket, key};
  call.query = {{"uploads", ""}};
  STOKER_ASSIGN_OR_RETURN(HttpResponse r, Send(call));
  std::optional<std::string> id = XmlValue(r.body, "UploadId");
  if (!id || id->empty()) return IOError("s3://" + bucket + "/" + key + ": no UploadId in answer");
  return *id;
}

Result<std::string> S3Client::UploadPart(const std::string& bucket, const std::string& key,
                                         const std::string& upload_id, int part_number,
                                         std::string_view body) const {
  Call call{"PUT", bucket, key};
  call.query = {{"partNumber", std::to_string(part_number)}, {"uploadId", upload_id}};
  call.body = body;
  STOKER_ASSIGN_OR_RETURN(HttpResponse r, Send(call));
  std::string etag = r.Header("etag");
  if (etag.empty())
    return IOError("s3://" + bucket + "/" + key + ": part " + std::to_string(part_number) +
                   " has no ETag");
  return etag;
}

Status S3Client::CompleteMultipartUpload(const std::string& bucket, const std::string& key,
                                         const std::string& upload_id,
                                         const std::vector<std::string>& part_etags) const {
  std::string xml = "<CompleteMultipartUpload>";
  for (size_t i = 0; i < part_etags.size(); ++i) {
    xml += "<Part><PartNumber>" + std::to_string(i + 1) + "</PartNumber><ETag>" +
           EscapeMarkup(part_etags[i]) + "</ETag></Part>";
  }
  xml += "</CompleteMultipartUpload>";
  Call call{"POST", bucket, key};
  call.query = {{"uploadId", upload_id}};
  call.body = xml;
  STOKER_ASSIGN_OR_RETURN(HttpResponse r, Send(call));
  // S3 may answer 200 with an <Error> body when completion fails late.
  if (XmlValue(r.body, "Error")) {
    return IOError("s3://" + bucket + "/" + key + ": CompleteMultipartUpload failed: " +
                   Scrub(XmlValue(r.body, "Message").value_or("")));
  }
  return Status::OK();
}

Status S3Client::AbortMultipartUpload(const std::string& bucket, const std::string& key,
                                      const std::string& upload_id) const {
  Call call{"DELETE", bucket, key};
  call.query = {{"uploadId", upload_id}};
  return Send(call).status();
}

}  // namespace stoker::storage
