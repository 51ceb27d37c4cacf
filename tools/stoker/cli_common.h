// Helpers shared by the CLI subcommands: one-line error reporting and exit codes.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string_view>

#include "stoker/status.h"

namespace stoker::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitCheckFailed = 1;
inline constexpr int kExitError = 2;

// Prints "stoker <command>: error: <status message>" on stderr and returns kExitError.
int ReportError(std::string_view command, const Status& status);

// For file flags the CLI itself opens (--report, --state), as ->transform(): a plain path, or a
// file:// URI turned into one; any other
// scheme is refused at parse time, naming what stoker serves (see common/uri.h).
CLI::Validator LocalFile();

struct RankAndWorldSize {
  uint32_t rank = 0;
  uint32_t world_size = 1;
};

// --rank / --world-size when given, else torchrun's RANK / WORLD_SIZE, else 0 / 1. kInvalidArgument
// for a malformed environment variable, a world size of 0, or a rank not below the world size.
Result<RankAndWorldSize> ResolveRankAndWorldSize(std::optional<uint32_t> rank,
                                                 std::optional<uint32_t> world_size);

}  // namespace stoker::cli
