#include "cli_common.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/uri.h"

namespace stoker::cli {

CLI::Validator LocalFile() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        Result<std::string> local = LocalPathFromUri(text);
        if (!local.ok()) return local.status().message();
        text = *local;
        return "";
      },
      "");
}

int ReportError(std::string_view command, const Status& status) {
  std::fprintf(stderr, "stoker %.*s: error: %s\n", static_cast<int>(command.size()), command.data(),
               status.message().c_str());
  return kExitError;
}

namespace {

// An unsigned environment variable; nullopt when unset or empty.
Result<std::optional<uint32_t>> EnvCount(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::optional<uint32_t>();
  char* end = nullptr;
  errno = 0;
  const unsigned long x = std::strtoul(v, &end, 10);
  if (errno != 0 || *end != '\0' || v[0] == '-' || x > 1u << 20) {
    return InvalidArgument(std::string("environment variable ") + name + "='" + v +
                           "' is not a valid number");
  }
  return std::optional<uint32_t>(static_cast<uint32_t>(x));
}

}  // namespace

Result<RankAndWorldSize> ResolveRankAndWorldSize(std::optional<uint32_t> rank,
                                                 std::optional<uint32_t> world_size) {
  STOKER_ASSIGN_OR_RETURN(std::optional<uint32_t> env_world, EnvCount("WORLD_SIZE"));
  STOKER_ASSIGN_OR_RETURN(std::optional<uint32_t> env_rank, EnvCount("RANK"));
  RankAndWorldSize r;
  r.world_size = world_size ? *world_size : env_world.value_or(1);
  r.rank = rank ? *rank : env_rank.value_or(0);
  if (r.world_size == 0) return InvalidArgument("--world-size must be at least 1");
  if (r.rank >= r.world_size) {
    return InvalidArgument("--rank " + std::to_string(r.rank) + " must be below --world-size " +
                           std::to_string(r.world_size));
  }
  return r;
}

}  // namespace stoker::cli
