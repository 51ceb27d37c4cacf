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

// The threads one rank uses where the user left the count to stoker (the loader's num_workers = 0,
// the stream's encode threads and pre-scan): the hardware threads shared by the ranks of this
// node, i.e. hardware threads / $LOCAL_WORLD_SIZE (torchrun's ranks per node), at least 1. Every
// default thread count of a rank comes from here, so 8 ranks on a node never start 8x the cores.
// A LOCAL_WORLD_SIZE that is unset or not a positive integer counts as 1.
int DefaultThreadsPerRank();
// The same from given values (0 hardware threads: unknown, taken as 1).
int ThreadsPerRank(unsigned hardware_threads, uint64_t local_world_size);

}  // namespace stoker
