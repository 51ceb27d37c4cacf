#include "storage/storage_uri.h"

#include "common/uri.h"

namespace stoker::storage {

Result<StorageUri> ParseStorageUri(std::string_view uri) {
  const std::string scheme = UriScheme(uri);
  StorageUri out;
  if (scheme.empty() || scheme == "file") {
    STOKER_ASSIGN_OR_RETURN(out.path, LocalPathFromUri(uri));
    if (out.path.empty()) return InvalidArgument("empty path");
    out.kind = UriKind::kFile;
    return out;
  }
  if (scheme == "s3") {
    std::string_view rest = uri.substr(5);
    const size_t slash = rest.find('/');
    out.kind = UriKind::kS3;
    out.bucket = std::string(rest.substr(0, slash));
    if (slash != std::string_view::npos) out.key = std::string(rest.substr(slash + 1));
    if (out.bucket.empty()) {
      return InvalidArgument(std::string(uri) + ": an s3:// URI must name a bucket (s3://bucket/key)");
    }
    return out;
  }
  if (scheme == "http" || scheme == "https") {
    const std::string_view rest = uri.substr(scheme.size() + 3);
    if (rest.empty() || rest[0] == '/') {
      return InvalidArgument(std::string(uri) + ": an " + scheme + ":// URI must name a host");
    }
    out.kind = UriKind::kHttp;
    out.url = std::string(uri);
    return out;
  }
  return InvalidArgument(std::string(uri) + ": stoker does not serve " + scheme +
                         ":// URIs; it serves " + std::string(kStorageSchemes));
}

std::string UriEncode(std::string_view s, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    const bool unreserved = (u >= 'A' && u <= 'Z') || (u >= 'a' && u <= 'z') ||
                            (u >= '0' && u <= '9') || c == '-' || c == '_' || c == '.' || c == '~';
    if (unreserved || (keep_slash && c == '/')) {
      out += c;
    } else {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  return out;
}

}  // namespace stoker::storage
