// Numbers from environment variables (torchrun's RANK, Slurm's array ids, stoker's own knobs).
// Thread-safe as far as getenv is: call it while no thread changes the environment.
#pragma once

#include <cstdint>
#include <optional>

#include "stoker/status.h"

namespace stoker {

// The unsigned decimal integer in environment variable `name`; nullopt when it is unset or empty.
// kInvalidArgument naming the variable and its value for anything else ("-1", "12x", "lots").
Result<std::optional<uint64_t>> EnvNumber(const char* name);

}  // namespace stoker
