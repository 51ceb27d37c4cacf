// The plan's flags on the command line, shared by `stoker plan` and `stoker explain`: the datasets
// ([WEIGHT:]PATH), --seq-len --batch-size --world-size --rank --seed --shuffle --block-shards
// --pack --bestfit-window --remainder, and what they build (the datasets' lengths, PlanOptions).
// Not thread-safe: one command at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "stoker/plan.h"
#include "stoker/status.h"
#include "stoker/token_source.h"

namespace stoker::cli {

struct PlanFlags {
  std::vector<std::string> datasets;
  uint64_t seq_len = 0;
  uint64_t batch_size = 0;
  std::optional<uint32_t> world_size;
  std::optional<uint32_t> rank;
  uint64_t seed = 0;
  std::string shuffle = "global";
  std::string pack = "concat";
  std::string remainder = "drop_last";
  uint64_t block_shards = 4;
  uint64_t bestfit_window = 4096;
};

// Registers the flags above on `sub` (the datasets positional and --seq-len, --batch-size
// required).
void AddPlanFlags(CLI::App* sub, PlanFlags* flags);

// "[WEIGHT:]PATH" -> weight and path. A prefix that is not a positive number is part of the path.
// The opened source goes to *source when given.
Result<PlanDataset> OpenPlanDataset(const std::string& arg,
                                    std::shared_ptr<const TokenSource>* source = nullptr);

// The PlanOptions the flags describe (rank and world size default to $RANK / $WORLD_SIZE).
Result<PlanOptions> BuildPlanOptions(const PlanFlags& flags);

}  // namespace stoker::cli
