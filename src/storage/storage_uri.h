// Storage URIs: which backend serves a name, and the parts that backend needs. Served: plain
// paths and file:// (local files), s3://bucket/key, http:// and https:// (read-only). Any other
// scheme is an error that names the served ones. Free functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "stoker/status.h"

namespace stoker::storage {

inline constexpr std::string_view kStorageSchemes =
    "local paths, file://, s3://bucket/key, http:// and https://";

enum class UriKind { kFile, kS3, kHttp };

struct StorageUri {
  UriKind kind = UriKind::kFile;
  std::string path;    // kFile: the local path
  std::string bucket;  // kS3
  std::string key;     // kS3: the key, possibly empty (the bucket's root) or a prefix
  std::string url;     // kHttp: the URI unchanged
};

// kInvalidArgument for an unserved scheme ("gs://b/k: stoker does not serve gs:// URIs; it
// serves ..."), an s3:// URI without a bucket, or a file:// URI that is not a local absolute path.
Result<StorageUri> ParseStorageUri(std::string_view uri);

// RFC 3986 percent-encoding of every byte but the unreserved ones (A-Z a-z 0-9 - _ . ~), and
// '/' too when `keep_slash` (S3 object keys in a path).
std::string UriEncode(std::string_view s, bool keep_slash);

}  // namespace stoker::storage
