// URIs and paths: the one list of the schemes stoker serves, and the parsing every module shares.
// Served: plain paths and file:// URIs (local files), s3://bucket/key, http:// and https://
// (read-only). Any other scheme is an error that names the served ones, so that
// `stoker pack -o gs://b/p` never writes a local directory named "gs:". A name enters the core
// through ParseUri (readers and writers of any served scheme: storage/open_backend.h) or
// LocalPathFromUri (the call sites that take local files only: tokenizers, state and report
// files). Free functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "stoker/status.h"

namespace stoker {

// The schemes stoker serves; a plain path (no scheme) is a local file too.
inline constexpr std::string_view kServedSchemes[] = {"file", "s3", "http", "https"};
// The same, for messages.
inline constexpr std::string_view kServedSchemesText =
    "local paths, file://, s3://bucket/key, http:// and https://";

// The scheme of "scheme://rest" (RFC 3986: a letter, then letters, digits, '+', '-', '.'),
// lower-cased; "" for anything else (a plain path, "C:x", "0.3:data").
std::string UriScheme(std::string_view path);

// Whether `uri` names a remote object or prefix: a served scheme other than file://.
bool IsRemoteUri(std::string_view uri);

// "scheme://authority/path" cut in three, as views into `uri`: the scheme as written, the
// authority (a host, host:port or bucket) and the path from the '/' after the authority on ("" if
// none). Without "://" all of it is the path. The one place that finds a URI's host.
struct UriParts {
  std::string_view scheme, authority, path;
};
UriParts SplitUri(std::string_view uri);

enum class UriKind { kFile, kS3, kHttp };

struct ParsedUri {
  UriKind kind = UriKind::kFile;
  std::string path;    // kFile: the local path
  std::string bucket;  // kS3
  std::string key;     // kS3: the key, possibly empty (the bucket's root) or a prefix
  std::string url;     // kHttp: the URI unchanged
};

// kInvalidArgument for an unserved scheme ("gs://b/k: stoker does not serve gs:// URIs; it
// serves ..."), an empty path, an s3:// URI without a bucket, an http(s):// URI without a host,
// or a file:// URI that is not a local absolute path.
Result<ParsedUri> ParseUri(std::string_view uri);

// For call sites that take local files only. A plain path is returned unchanged;
// "file:///abs/x" and "file://localhost/abs/x" give "/abs/x". kInvalidArgument for a file:// URI
// naming another host, for a remote URI (served elsewhere, not here: the message says so) and for
// an unserved scheme. No percent-decoding.
Result<std::string> LocalPathFromUri(std::string_view path);

// `base` (a URI such as s3://b/ds or a local path) joined with the relative path `rel`, with "."
// and ".." segments of `rel` resolved against base's path ("s3://b/a/ds" + "../p/s" gives
// "s3://b/a/p/s"); object stores do not resolve them. A ".." above base's root is kept.
std::string JoinUri(std::string_view base, std::string_view rel);

// RFC 3986 percent-encoding of every byte but the unreserved ones (A-Z a-z 0-9 - _ . ~), and
// '/' too when `keep_slash` (S3 object keys in a path).
std::string UriEncode(std::string_view s, bool keep_slash);

}  // namespace stoker
