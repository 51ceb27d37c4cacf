#include "storage/sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cctype>
#include <ctime>

#include "common/uri.h"

namespace stoker::storage {
namespace {

std::string Hex(const unsigned char* data, size_t n) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(2 * n, '0');
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = kHex[data[i] >> 4];
    out[2 * i + 1] = kHex[data[i] & 15];
  }
  return out;
}

std::string HmacSha256(std::string_view key, std::string_view data) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac, &len);
  return std::string(reinterpret_cast<const char*>(mac), len);
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Header values: leading and trailing spaces removed, inner runs of spaces made one.
std::string TrimValue(std::string_view v) {
  std::string out;
  bool space = false;
  for (char c : v) {
    if (c == ' ' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> SortedHeaders(const SigningRequest& request) {
  std::vector<std::pair<std::string, std::string>> headers;
  for (const auto& [name, value] : request.headers)
    headers.emplace_back(Lower(name), TrimValue(value));
  std::sort(headers.begin(), headers.end());
  return headers;
}

std::string SignedHeaders(const std::vector<std::pair<std::string, std::string>>& headers) {
  std::string out;
  for (const auto& h : headers) {
    if (!out.empty()) out += ';';
    out += h.first;
  }
  return out;
}

std::string Scope(const SigningKeyParts& key, const std::string& amz_date) {
  return amz_date.substr(0, 8) + "/" + key.region + "/" + key.service + "/aws4_request";
}

}  // namespace

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return Hex(digest, sizeof(digest));
}

std::string CanonicalQueryString(const std::vector<std::pair<std::string, std::string>>& query) {
  std::vector<std::pair<std::string, std::string>> encoded;
  for (const auto& [name, value] : query) {
    encoded.emplace_back(UriEncode(name, false), UriEncode(value, false));
  }
  std::sort(encoded.begin(), encoded.end());
  std::string out;
  for (const auto& [name, value] : encoded) {
    if (!out.empty()) out += '&';
    out += name + "=" + value;
  }
  return out;
}

std::string CanonicalRequest(const SigningRequest& request) {
  const auto headers = SortedHeaders(request);
  std::string out = request.method + "\n" + request.canonical_uri + "\n" +
                    CanonicalQueryString(request.query) + "\n";
  for (const auto& [name, value] : headers) out += name + ":" + value + "\n";
  out += "\n" + SignedHeaders(headers) + "\n" + request.payload_sha256;
  return out;
}

std::string StringToSign(const SigningRequest& request, const SigningKeyParts& key,
                         const std::string& amz_date) {
  return "AWS4-HMAC-SHA256\n" + amz_date + "\n" + Scope(key, amz_date) + "\n" +
         Sha256Hex(CanonicalRequest(request));
}

std::string AuthorizationHeader(const SigningRequest& request, const SigningKeyParts& key,
                                const std::string& amz_date) {
  const std::string k_date = HmacSha256("AWS4" + key.secret_access_key, amz_date.substr(0, 8));
  const std::string k_region = HmacSha256(k_date, key.region);
  const std::string k_service = HmacSha256(k_region, key.service);
  const std::string k_signing = HmacSha256(k_service, "aws4_request");
  const std::string mac = HmacSha256(k_signing, StringToSign(request, key, amz_date));
  const std::string signature = Hex(reinterpret_cast<const unsigned char*>(mac.data()), mac.size());
  return "AWS4-HMAC-SHA256 Credential=" + key.access_key_id + "/" + Scope(key, amz_date) +
         ",SignedHeaders=" + SignedHeaders(SortedHeaders(request)) + ",Signature=" + signature;
}

std::string AmzDateNow() {
  const std::time_t now = std::time(nullptr);
  std::tm tm;
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

}  // namespace stoker::storage
