// `stoker prefetch DATASET... [--cache-dir DIR]`: stages in a node-local cache (by default the
// per-user one the loader uses) the shards a rank reads first (in a Slurm prolog, before the GPUs
// are allocated), in plan order.
#include <cstdio>
#include <string>

#include "cache/cache_defaults.h"
#include "cli_common.h"
#include "commands.h"
#include "common/cache_root.h"
#include "common/human_size.h"
#include "diag/bench_runner.h"
#include "loader/cache_lookahead.h"
#include "loader_flags.h"
#include "number_flags.h"
#include "stoker/plan.h"

namespace stoker::cli {
namespace {

struct PrefetchArgs {
  LoaderFlags loader;
  uint64_t epoch = 0;
  uint64_t steps = 100;
};

Status Prefetch(const PrefetchArgs& a) {
  STOKER_ASSIGN_OR_RETURN(LoaderOptions options, ToLoaderOptions(a.loader));
  if (options.cache_dir.empty()) return InvalidArgument("--no-cache: prefetch stages into a cache");
  options.cache_dir = cache::ResolveCacheDir(options.cache_dir);
  if (options.cache_dir.empty()) {
    return InvalidArgument(
        "prefetch: STOKER_CACHE_DIR=off turns the default cache off; give "
        "--cache-dir DIR");
  }
  STOKER_ASSIGN_OR_RETURN(std::vector<LoaderDataset> datasets,
                          diag::OpenDatasets(a.loader.datasets, options));
  std::vector<std::shared_ptr<const TokenSource>> sources;
  std::vector<PlanDataset> plan_datasets;
  for (const LoaderDataset& d : datasets) {
    STOKER_ASSIGN_OR_RETURN(DatasetLengths lengths, d.source->Lengths());
    plan_datasets.push_back({std::make_shared<const DatasetLengths>(std::move(lengths)), d.weight});
    sources.push_back(d.source);
  }
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<Plan> plan,
                          Plan::Create(std::move(plan_datasets), PlanOptionsFor(options)));
  PlanPosition from;
  from.epoch = a.epoch;
  const auto upcoming = ShardsAhead(*plan, sources, from, options.rank, a.steps);
  uint64_t shards = 0, bytes = 0;
  for (size_t d = 0; d < sources.size(); ++d) {
    const TokenSource& ds = *sources[d];
    if (!ds.caches_shards() || upcoming[d].empty()) continue;
    ds.ScheduleShards(upcoming[d]);
    // Under global shuffle over a dataset larger than the cache only the .idx is staged (the
    // documents are read by ranged GETs).
    const bool ranged = ds.storage_stats().ranged_datasets > 0;
    for (uint64_t s : upcoming[d]) {
      STOKER_RETURN_IF_ERROR(ds.StageShard(s));
      ++shards;
      const TokenSource::ShardBytes b = ds.shard_bytes(s);
      bytes += b.idx;
      if (!ranged) bytes += b.bin;
    }
  }
  std::printf(
      "prefetch: %llu shard(s), %s, staged in %s for rank %u of %u, epoch %llu, steps "
      "0-%llu\n",
      static_cast<unsigned long long>(shards), FormatSize(bytes).c_str(), options.cache_dir.c_str(),
      options.rank, options.world_size, static_cast<unsigned long long>(a.epoch),
      static_cast<unsigned long long>(a.steps - 1));
  return Status::OK();
}

}  // namespace

void AddPrefetchCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<PrefetchArgs>();
  auto* sub = app.add_subcommand(
      "prefetch",
      "Stage in a node-local cache the shards of remote datasets that a rank reads first, in plan "
      "order (e.g. in a Slurm prolog, before the GPUs are allocated)");
  sub->footer(
      "Takes the loader's flags (the plan must be the training run's: same --seq-len, "
      "--batch-size, --shuffle, --seed, --world-size) and the loader's --cache-dir (default: "
      "shards/ in the cache root, " +
      std::string(kCacheRootRule) +
      "). Under --shuffle global whole shards are staged when the dataset fits the cache "
      "budget; else only the .idx files: documents are then read by ranged GETs.\n"
      "Exit status: 0 staged, 2 error.\n"
      "Example:\n"
      "  stoker prefetch s3://bucket/ds --cache-dir /nvme/stoker --cache-size 200GiB \\\n"
      "      --seq-len 2048 --batch-size 8 --shuffle block --rank 3 --world-size 64 --steps 500");
  AddLoaderFlags(sub, &args->loader);
  sub->add_option("--epoch", args->epoch, "Epoch to stage")
      ->check(WholeNumber<uint64_t>())
      ->capture_default_str();
  sub->add_option("--steps", args->steps, "Steps of that epoch to stage, from its first")
      ->check(WholeNumber<uint64_t>(1))
      ->capture_default_str();
  sub->callback([args, exit_code] {
    Status st = ExpandMixtureFlag(&args->loader);
    if (st.ok()) st = Prefetch(*args);
    *exit_code = st.ok() ? kExitOk : ReportError("prefetch", st);
  });
}

}  // namespace stoker::cli
