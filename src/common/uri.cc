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

Result<std::string> LocalPathFromUri(std::string_view path) {
  const std::string scheme = UriScheme(path);
  if (scheme.empty()) return std::string(path);
  if (scheme != "file") {
    return InvalidArgument(std::string(path) + ": stoker does not serve " + scheme +
                           ":// URIs; it serves " + std::string(kServedSchemes));
  }
  std::string_view rest = path.substr(scheme.size() + 3);  // after "file://"
  if (rest.rfind("localhost/", 0) == 0) rest.remove_prefix(9);
  if (rest.empty() || rest[0] != '/') {
    return InvalidArgument(std::string(path) +
                           ": a file:// URI must name a local absolute path (file:///path)");
  }
  return std::string(rest);
}

std::string JoinUri(std::string_view base, std::string_view rel) {
  // The part that ".." never climbs out of: "scheme://authority/" (the bucket or host).
  size_t root = 0;
  if (!UriScheme(base).empty()) {
    const size_t authority = base.find("://") + 3;
    const size_t slash = base.find('/', authority);
    root = slash == std::string_view::npos ? base.size() : slash + 1;
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

}  // namespace stoker
