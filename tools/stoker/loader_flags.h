// Loader options on the command line, the same for every command that runs the loader (bench,
// doctor, prefetch): the plan's flags (plan_flags.h, with LoaderOptions' defaults), then
// the loader's own flags from its option table (--num-workers --prefetch-factor --on-error
// --token-dtype --seq-idx ... and the cache flags); and the bench run's own options
// (how long, warm-up, simulated step) with the run itself and its progress line, shared by bench
// and doctor. Not thread-safe: one command at a time.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "diag/bench_runner.h"
#include "plan_flags.h"
#include "stoker/loader.h"
#include "stoker/status.h"

namespace stoker::cli {

// The plan's flags (datasets, seq_len, ... as PlanFlags), then the loader's own: every row of
// LoaderOptionTable() with a CLI spelling (loader/loader_options_table.h) writes into `options`
// (PlanFlags').
struct LoaderFlags : PlanFlags {
  LoaderFlags() { options = LoaderOptions{}; }  // the loader's defaults (batch_size 8)
  bool no_cache = false;                        // remote datasets read by ranged GETs, no cache
};

// Registers the positional datasets (or --mixture: ExpandMixtureFlag checks that one is given) and
// the loader options.
void AddLoaderFlags(CLI::App* sub, LoaderFlags* flags);

// The LoaderOptions the flags describe. kInvalidArgument for a rank outside the world size or a
// bad RANK / WORLD_SIZE in the environment.
Result<LoaderOptions> ToLoaderOptions(const LoaderFlags& flags);

// " --seq-len 2048 --batch-size 8 ..." as given, for titles and messages.
std::string DescribeLoaderFlags(const LoaderFlags& flags, const LoaderOptions& options);

// How long the bench runs and what it simulates.
struct BenchFlags {
  std::optional<uint64_t> batches;
  std::optional<double> seconds;           // default 10 when neither is given
  std::optional<uint64_t> warmup_batches;  // default: max(10, 2 x ring slots)
  double consumer_step_ms = 0;
  bool synthetic = false;
  bool progress = true;
  // Opens the loader instead of the DATASET arguments (bench --stream).
  std::function<Result<std::unique_ptr<Loader>>(const LoaderOptions&)> open;
};

// Registers --batches / --seconds (mutually exclusive), --warmup-batches, --consumer-step-ms.
void AddBenchRunFlags(CLI::App* sub, BenchFlags* flags);

// Opens the datasets and runs the bench, drawing a progress line on stderr while it runs (redrawn
// on a terminal, one line every 5 s otherwise). Errors name the dataset.
Result<diag::BenchResult> RunBenchFromFlags(const LoaderFlags& loader_flags,
                                            const LoaderOptions& options,
                                            const BenchFlags& bench_flags, const char* label);

}  // namespace stoker::cli
