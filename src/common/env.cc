#include "common/env.h"

#include <charconv>
#include <cstdlib>
#include <string>
#include <string_view>

namespace stoker {

Result<std::optional<uint64_t>> EnvNumber(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::optional<uint64_t>();
  uint64_t n = 0;
  std::string_view s(v);
  auto [p, err] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (err != std::errc() || p != s.data() + s.size()) {
    return InvalidArgument(std::string("environment variable ") + name + "='" + v +
                           "' is not a non-negative integer");
  }
  return std::optional<uint64_t>(n);
}

}  // namespace stoker
