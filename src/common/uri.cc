#include "common/uri.h"

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

}  // namespace stoker
