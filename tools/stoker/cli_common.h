// Helpers shared by the CLI subcommands: one-line error reporting and exit codes.
#pragma once

#include <string_view>

#include "stoker/status.h"

namespace stoker::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitCheckFailed = 1;
inline constexpr int kExitError = 2;

// Prints "stoker <command>: error: <status message>" on stderr and returns kExitError.
int ReportError(std::string_view command, const Status& status);

}  // namespace stoker::cli
