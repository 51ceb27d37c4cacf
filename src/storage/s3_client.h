// S3Client: the S3 REST calls stoker makes — HeadObject, ranged GetObject, ListObjectsV2 (one
// page), PutObject and the three multipart-upload calls — each built, signed (sigv4.h) and sent
// through an HttpClient. Path-style ("endpoint/bucket/key") or virtual-hosted
// ("bucket.endpoint/key") addressing. An S3 error answer becomes a Status naming the object and
// S3's own error code and message; the secret never appears in one (it is also scrubbed from
// anything the server echoes). Thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "storage/aws_config.h"
#include "storage/backend.h"
#include "storage/http_client.h"
#include "storage/s3_xml.h"

namespace stoker::storage {

enum class S3Addressing { kAuto, kPath, kVirtual };  // kAuto: path style for a custom endpoint

class S3Client {
 public:
  // `http` configures the connections (and HTTP-level metering, see http_client.h).
  S3Client(AwsConfig config, S3Addressing addressing, HttpClientOptions http = {});

  // The URL of an object (key may be empty for the bucket itself), and the host it names.
  std::string ObjectUrl(const std::string& bucket, const std::string& key) const;

  Result<ObjectInfo> Head(const std::string& bucket, const std::string& key) const;
  // Exactly `n` bytes at `offset` into `out`; a shorter or longer body is kUnavailable. With
  // `object_size` > 0, an answer naming another total size is kCorruption (CheckRangeTotal).
  Status GetRange(const std::string& bucket, const std::string& key, uint64_t offset, size_t n,
                  char* out, uint64_t object_size = 0) const;
  Result<S3ListPage> ListPage(const std::string& bucket, const std::string& prefix,
                              const std::string& continuation_token, int max_keys) const;
  Status PutObject(const std::string& bucket, const std::string& key, std::string_view body) const;
  Result<std::string> CreateMultipartUpload(const std::string& bucket,
                                            const std::string& key) const;
  // Returns the part's ETag (with its quotes, as CompleteMultipartUpload wants it).
  Result<std::string> UploadPart(const std::string& bucket, const std::string& key,
                                 const std::string& upload_id, int part_number,
                                 std::string_view body) const;
  Status CompleteMultipartUpload(const std::string& bucket, const std::string& key,
                                 const std::string& upload_id,
                                 const std::vector<std::string>& part_etags) const;
  Status AbortMultipartUpload(const std::string& bucket, const std::string& key,
                              const std::string& upload_id) const;

  const AwsConfig& config() const { return config_; }

 private:
  struct Call {
    Call(std::string m, std::string b, std::string k)
        : method(std::move(m)), bucket(std::move(b)), key(std::move(k)) {}
    std::string method;
    std::string bucket;
    std::string key;
    std::vector<std::pair<std::string, std::string>> query;
    std::vector<std::pair<std::string, std::string>> headers;  // extra, signed
    std::string_view body;
    char* body_out = nullptr;
    size_t max_body_bytes = 64 << 20;
  };
  // Signs and sends; a non-2xx answer is returned as an error Status.
  Result<HttpResponse> Send(const Call& call) const;
  bool VirtualHosted(const std::string& bucket) const;
  std::string Scrub(std::string text) const;

  AwsConfig config_;
  S3Addressing addressing_;
  std::string scheme_;     // "https"
  std::string host_;       // "s3.us-east-1.amazonaws.com" or "127.0.0.1:9000"
  std::string base_path_;  // a path prefix of the endpoint, usually ""
  HttpClient http_;
};

}  // namespace stoker::storage
