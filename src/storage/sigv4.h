// AWS Signature Version 4 (the "Authorization: AWS4-HMAC-SHA256 ..." header), computed with
// OpenSSL's SHA-256 and HMAC from the specification: canonical request → string to sign →
// signing key → signature. Checked in sigv4_test.cc against the examples the AWS documentation
// publishes. The secret never leaves this file's functions (only the signature does).
// Free functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stoker::storage {

struct SigningRequest {
  std::string method;         // "GET"
  std::string canonical_uri;  // the path, already percent-encoded ("/bucket/a%20b")
  std::vector<std::pair<std::string, std::string>> query;    // raw (not encoded) names and values
  std::vector<std::pair<std::string, std::string>> headers;  // must include host and x-amz-date
  std::string payload_sha256;  // lower-case hex, or "UNSIGNED-PAYLOAD"
};

struct SigningKeyParts {
  std::string access_key_id;
  std::string secret_access_key;
  std::string region;   // "us-east-1"
  std::string service;  // "s3"
};

std::string Sha256Hex(std::string_view data);

// The canonical query string: names and values encoded, sorted by name then value, joined by '&'.
std::string CanonicalQueryString(const std::vector<std::pair<std::string, std::string>>& query);
std::string CanonicalRequest(const SigningRequest& request);
// `amz_date` is "YYYYMMDDTHHMMSSZ".
std::string StringToSign(const SigningRequest& request, const SigningKeyParts& key,
                         const std::string& amz_date);
// The value of the Authorization header.
std::string AuthorizationHeader(const SigningRequest& request, const SigningKeyParts& key,
                                const std::string& amz_date);

// The current time as "YYYYMMDDTHHMMSSZ" (UTC).
std::string AmzDateNow();

}  // namespace stoker::storage
