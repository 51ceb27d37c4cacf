// Paths and URIs. Until the storage layer serves remote schemes, stoker reads and writes local
// files only: an argument of the form "scheme://..." is either file:// (a local path) or an error
// that names what stoker serves, so that `stoker pack -o s3://b/p` never writes a local directory
// named "s3:". Every input and output path goes through LocalPathFromUri where it enters the core.
// Free functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "stoker/status.h"

namespace stoker {

// What stoker serves today, for messages.
inline constexpr std::string_view kServedSchemes = "local paths and file:// URIs";

// The scheme of "scheme://rest" (RFC 3986: a letter, then letters, digits, '+', '-', '.'),
// lower-cased; "" for anything else (a plain path, "C:x", "0.3:data").
std::string UriScheme(std::string_view path);

// A plain path is returned unchanged; "file:///abs/x" and "file://localhost/abs/x" give "/abs/x".
// kInvalidArgument for any other scheme ("s3://b/p: stoker does not serve s3:// URIs; it serves
// local paths and file:// URIs") and for a file:// URI naming another host. No percent-decoding.
Result<std::string> LocalPathFromUri(std::string_view path);

// `base` (a URI such as s3://b/ds or a local path) joined with the relative path `rel`, with "."
// and ".." segments of `rel` resolved against base's path ("s3://b/a/ds" + "../p/s" gives
// "s3://b/a/p/s"); object stores do not resolve them. A ".." above base's root is kept.
std::string JoinUri(std::string_view base, std::string_view rel);

}  // namespace stoker
