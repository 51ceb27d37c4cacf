#include "common/uri.h"

#include <algorithm>
#include <cctype>

namespace stoker {

std::string UriScheme(std::string_view path) {
  const size_t sep = path.find("://");
  if (sep == std::string_view::npos || sep == 0) return "";
  if (!std::isalpha(static_cast<unsigned char>(path[0]))) return "";
  std::string scheme;
  for (char c : path.substr(0, sep)) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (!std::isalnum(u) && c != '+' && c != '-' && c != '.') return "";
    scheme += static_cast<char>(std::tolower(u));
  }
  return scheme;
}

bool IsRemoteUri(std::string_view uri) {
  const std::string scheme = UriScheme(uri);
  return scheme == "s3" || scheme == "http" || scheme == "https";
}

UriParts SplitUri(std::string_view uri) {
  const size_t sep = uri.find("://");
  if (sep == std::string_view::npos) return {{}, {}, uri};
  const std::string_view rest = uri.substr(sep + 3);
  const size_t slash = std::min(rest.find('/'), rest.size());
  return {uri.substr(0, sep), rest.substr(0, slash), rest.substr(slash)};
}

namespace {

bool IsServedScheme(std::string_view scheme) {
  return std::ranges::find(kServedSchemes, scheme) != std::end(kServedSchemes);
}

Status Unserved(std::string_view uri, std::string_view scheme) {
  return InvalidArgument(std::string(uri) + ": stoker does not serve " + std::string(scheme) +
                         ":// URIs; it serves " + std::string(kServedSchemesText));
}

// "file:///abs/x" or "file://localhost/abs/x" -> "/abs/x".
Result<std::string> FileUriPath(std::string_view uri) {
  std::string_view rest = uri.substr(7);  // after "file://"
  if (rest.rfind("localhost/", 0) == 0) rest.remove_prefix(9);
  if (rest.empty() || rest[0] != '/') {
    return InvalidArgument(std::string(uri) +
                           ": a file:// URI must name a local absolute path (file:///path)");
  }
  return std::string(rest);
}

}  // namespace

Result<ParsedUri> ParseUri(std::string_view uri) {
  const std::string scheme = UriScheme(uri);
  if (!scheme.empty() && !IsServedScheme(scheme)) return Unserved(uri, scheme);
  ParsedUri out;
  if (scheme.empty() || scheme == "file") {
    if (scheme.empty()) {
      out.path = std::string(uri);
    } else {
      STOKER_ASSIGN_OR_RETURN(out.path, FileUriPath(uri));
    }
    if (out.path.empty()) return InvalidArgument("empty path");
    out.kind = UriKind::kFile;
    return out;
  }
  const UriParts parts = SplitUri(uri);
  if (scheme == "s3") {
    out.kind = UriKind::kS3;
    out.bucket = std::string(parts.authority);
    if (!parts.path.empty()) out.key = std::string(parts.path.substr(1));
    if (out.bucket.empty()) {
      return InvalidArgument(std::string(uri) +
                             ": an s3:// URI must name a bucket (s3://bucket/key)");
    }
    return out;
  }
  if (parts.authority.empty()) {  // http, https
    return InvalidArgument(std::string(uri) + ": an " + scheme + ":// URI must name a host");
  }
  out.kind = UriKind::kHttp;
  out.url = std::string(uri);
  return out;
}

Result<std::string> LocalPathFromUri(std::string_view path) {
  const std::string scheme = UriScheme(path);
  if (scheme.empty()) return std::string(path);
  if (scheme == "file") return FileUriPath(path);
  if (!IsServedScheme(scheme)) return Unserved(path, scheme);
  return InvalidArgument(std::string(path) + ": stoker does not serve " + scheme +
                         ":// URIs here; this takes local paths and file:// URIs (remote URIs are "
                         "served for datasets, record shards and pack outputs: docs/storage.md)");
}

std::string JoinUri(std::string_view base, std::string_view rel) {
  // The part that ".." never climbs out of: "scheme://authority/" (the bucket or host).
  size_t root = 0;
  if (!UriScheme(base).empty()) {
    const std::string_view path = SplitUri(base).path;
    root = path.empty() ? base.size() : static_cast<size_t>(path.data() - base.data()) + 1;
  }
  std::string out(base);
  while (out.size() > root && out.back() == '/') out.pop_back();
  while (!rel.empty()) {
    const size_t slash = rel.find('/');
    const std::string_view seg = rel.substr(0, slash);
    rel = slash == std::string_view::npos ? std::string_view() : rel.substr(slash + 1);
    if (seg.empty() || seg == ".") continue;
    const size_t last = out.rfind('/');
    const bool can_climb = out.size() > root && last != std::string::npos && last + 1 >= root &&
                           out.compare(last + 1, std::string::npos, "..") != 0;
    if (seg == ".." && can_climb) {
      out.resize(std::max({last, root, size_t{last == 0 ? 1u : 0u}}));
      continue;
    }
    if (!out.empty() && out.back() != '/') out.push_back('/');
    out.append(seg);
  }
  return out;
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

}  // namespace stoker
