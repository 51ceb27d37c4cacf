#include "common/env.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>

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

int ThreadsPerRank(unsigned hardware_threads, uint64_t local_world_size) {
  const uint64_t cores = std::max(1u, hardware_threads);
  return static_cast<int>(std::max<uint64_t>(1, cores / std::max<uint64_t>(1, local_world_size)));
}

int DefaultThreadsPerRank() {
  Result<std::optional<uint64_t>> local = EnvNumber("LOCAL_WORLD_SIZE");
  const uint64_t ranks = local.ok() && local->has_value() ? **local : 1;
  return ThreadsPerRank(std::thread::hardware_concurrency(), ranks);
}

}  // namespace stoker
