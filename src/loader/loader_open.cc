// Loader::Open: datasets by path or TokenSource -> plan -> engine. Kept apart from loader.cc so
// that code using only hand-made planners does not link the plan and the format readers.
#include <algorithm>
#include <cstdio>
#include <string>

#include "cache/cache_defaults.h"
#include "format/open_token_source.h"
#include "loader/cache_lookahead.h"
#include "loader/loader_impl.h"
#include "loader/mixture_spec.h"
#include "loader/remote_options.h"
#include "plan/plan_batch_planner.h"
#include "stoker/loader.h"

namespace stoker {

RemoteDatasetOptions RemoteOptionsFor(const LoaderOptions& options) {
  RemoteDatasetOptions ro;
  // Global shuffle reads one document here and one there: fetching whole parts would read many
  // times the bytes used. Block shuffle and source order reread each part many times.
  // Under global shuffle, whole shards through the cache when they all fit its budget (every
  // epoch reads every shard), exact ranges otherwise, with a warning: request latency then bounds
  // delivery (docs/cache.md, "Global shuffle over remote data").
  ro.reads = options.shuffle == ShuffleMode::kGlobal ? RemoteReads::kExact : RemoteReads::kParts;
  ro.whole_shards_if_they_fit = true;
  ro.warn_if_ranged = true;
  ro.max_open_shards = std::max<uint64_t>(8, 2 * options.block_shards);
  ro.cache_dir = cache::ResolveCacheDir(options.cache_dir);
  ro.cache_size_bytes = options.cache_size_bytes;
  return ro;
}

Result<std::unique_ptr<Loader>> Loader::Open(std::vector<LoaderDataset> datasets,
                                             const LoaderOptions& options,
                                             const PlanState* resume) {
  STOKER_RETURN_IF_ERROR(ValidateLoaderOptions(options));
  if (datasets.empty()) return InvalidArgument("loader: no dataset given");
  std::vector<std::shared_ptr<const TokenSource>> sources;
  std::vector<PlanDataset> plan_datasets;
  std::vector<std::string> paths;
  for (LoaderDataset& d : datasets) {
    paths.push_back(d.path);
    std::shared_ptr<const TokenSource> source = d.source;
    if (!source) {
      Result<std::unique_ptr<TokenSource>> opened =
          OpenTokenSource(d.path, RemoteOptionsFor(options));
      if (!opened.ok()) return opened.status().WithContext("loader: opening " + d.path);
      source = std::move(opened).value();
    }
    STOKER_ASSIGN_OR_RETURN(DatasetLengths lengths, source->Lengths());
    if (lengths.name.empty()) lengths.name = d.path.empty() ? source->path() : d.path;
    plan_datasets.push_back({std::make_shared<const DatasetLengths>(std::move(lengths)), d.weight});
    sources.push_back(std::move(source));
  }
  STOKER_RETURN_IF_ERROR(CheckSameTokenizer(sources, paths).WithContext("loader"));
  STOKER_ASSIGN_OR_RETURN(
      std::unique_ptr<Plan> plan_owned,
      Plan::Create(std::move(plan_datasets), PlanOptionsFor(options), SharedWindowCounter()));
  std::shared_ptr<const Plan> plan(std::move(plan_owned));
  if (!plan->HasStep({0, 0})) {  // not steps_per_epoch: that would pack a whole bestfit epoch
    return InvalidArgument("loader: the plan yields no full batch of " +
                           std::to_string(options.batch_size) + " rows per rank (world size " +
                           std::to_string(options.world_size) + ")");
  }
  PlanPosition start;
  if (resume != nullptr && resume->fingerprint != plan->fingerprint() && plan->num_datasets() > 1) {
    // An edited mixture (docs/plan.md, "Edits on resume"): each dataset continues where the
    // checkpoint says it stopped.
    Result<Plan::Continued> continued = plan->ContinueFrom(*resume);
    if (!continued.ok()) return continued.status().WithContext("loader: resuming the checkpoint");
    std::fprintf(stderr, "stoker: the checkpoint's mixture differs from this one; continuing:\n%s",
                 continued->summary.c_str());
    plan = std::move(continued->plan);
    start = continued->position;
  } else if (resume != nullptr) {
    STOKER_ASSIGN_OR_RETURN(start, plan->Restore(*resume));
  }
  auto planner = std::make_shared<PlanBatchPlanner>(plan, options.rank);
  std::vector<std::shared_ptr<const DocumentReader>> readers(sources.begin(), sources.end());
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<Loader> l,
                          OpenEngine(std::move(planner), std::move(readers), options, start));
  // Remote datasets behind a cache: schedule the shards of the first steps from `start` (and
  // Next keeps the look-ahead going).
  Impl& m = *l->impl_;
  m.plan = std::move(plan);
  m.plan_sources = std::move(sources);
  m.plan_paths = std::move(paths);
  m.cached_sources = AnyCachedSource(m.plan_sources);
  if (m.cached_sources) {
    m.scheduled_steps = ScheduleShardsAhead(*m.plan, m.plan_sources, start, options.rank);
  }
  return l;
}

}  // namespace stoker
