#include "loader_flags.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "cli_common.h"
#include "common/cache_root.h"
#include "common/human_size.h"
#include "common/progress.h"
#include "diag/bench_report.h"
#include "flag_alias.h"
#include "number_flags.h"
#include "stoker/plan.h"

namespace stoker::cli {

void AddLoaderFlags(CLI::App* sub, LoaderFlags* f) {
  AddPlanFlags(sub, f, PlanFlagsUse::kLoader);
  auto* workers = sub->add_option("--num-workers", f->num_workers,
                                  "Worker threads (0 = cores / $LOCAL_WORLD_SIZE, at least 1)")
                      ->check(WholeNumber<int>(0))
                      ->capture_default_str();
  AddDeprecatedAlias(sub, "--workers", workers, &f->num_workers, WholeNumber<int>(0));
  sub->add_option("--prefetch-factor", f->prefetch_factor, "Batches in flight per worker")
      ->check(WholeNumber<int>(1))
      ->capture_default_str();
  sub->add_option("--on-error", f->on_error,
                  "A bad read or corrupt piece: fail (the batch's error) or skip (a masked hole, "
                  "counted)")
      ->check(CLI::IsMember({"fail", "skip"}))
      ->capture_default_str();
  auto* dir = sub->add_option("--cache-dir", f->cache_dir,
                              "Read remote datasets through a node-local disk cache in DIR "
                              "(shared by the ranks of a node; look-ahead in plan order; default: "
                              "shards/ in the cache root, " +
                                  std::string(kCacheRootRule) + ")")
                  ->transform(LocalFile());
  auto* size = sub->add_option("--cache-size", f->cache_size,
                               "The cache's budget, e.g. 200GiB (default: 64 GiB or half the "
                               "free disk)");
  sub->add_flag("--no-cache", f->no_cache,
                "Read remote datasets by ranged GETs, without a cache (local data never uses one)")
      ->excludes(dir)
      ->excludes(size);
}

Result<LoaderOptions> ToLoaderOptions(const LoaderFlags& f) {
  LoaderOptions o;
  STOKER_ASSIGN_OR_RETURN(static_cast<PlanOptions&>(o), BuildPlanOptions(f));
  o.num_workers = f.num_workers;
  o.prefetch_factor = f.prefetch_factor;
  o.on_error = f.on_error == "skip" ? ErrorPolicy::kSkip : ErrorPolicy::kFail;
  STOKER_ASSIGN_OR_RETURN(o.long_documents, ParseLongDocuments(f.long_documents));
  o.cache_dir = f.no_cache ? "" : f.cache_dir.empty() ? "auto" : f.cache_dir;
  if (!f.cache_size.empty()) {
    STOKER_ASSIGN_OR_RETURN(o.cache_size_bytes, ParseSize(f.cache_size));
    if (o.cache_size_bytes == 0) return InvalidArgument("--cache-size must be positive");
  }
  return o;
}

std::string DescribeLoaderFlags(const LoaderFlags& f, const LoaderOptions& o) {
  std::string s;
  for (const std::string& d : f.datasets) s += d + " ";
  s += "--seq-len " + std::to_string(o.seq_len) + " --batch-size " + std::to_string(o.batch_size) +
       " --num-workers " +
       (o.num_workers == 0 ? std::string("auto") : std::to_string(o.num_workers)) +
       " --prefetch-factor " + std::to_string(o.prefetch_factor) + " --shuffle " +
       std::string(ShuffleModeName(o.shuffle)) + " --pack " + std::string(PackModeName(o.pack)) +
       " --seed " + std::to_string(o.seed) + " --world-size " + std::to_string(o.world_size) +
       " --rank " + std::to_string(o.rank);
  return s;
}

void AddBenchRunFlags(CLI::App* sub, BenchFlags* f) {
  auto* batches = sub->add_option("--batches", f->batches, "Measure this many batches")
                      ->check(WholeNumber<uint64_t>(1));
  auto* seconds = sub->add_option("--seconds", f->seconds, "Measure this long (default 10)")
                      ->check(RealNumber(0, Bound::kExclusive));
  batches->excludes(seconds);
  seconds->excludes(batches);
  sub->add_option("--warmup-batches", f->warmup_batches,
                  "Batches delivered before measuring, excluded from every figure (default: "
                  "max(10, 2 x ring slots))")
      ->check(WholeNumber<uint64_t>());
  sub->add_option("--consumer-step-ms", f->consumer_step_ms,
                  "Sleep this long per batch, like a training step (turns on the stall monitor)")
      ->check(RealNumber(0, Bound::kInclusive))
      ->capture_default_str();
}

Result<diag::BenchResult> RunBenchFromFlags(const LoaderFlags& lf, const LoaderOptions& options,
                                            const BenchFlags& bf, const char* label) {
  diag::BenchConfig c;
  if (!bf.synthetic && !bf.open) {
    STOKER_ASSIGN_OR_RETURN(c.datasets, diag::OpenDatasets(lf.datasets, options));
  }
  c.open = bf.open;
  c.options = options;
  c.synthetic = bf.synthetic;
  c.batches = bf.batches;
  c.seconds = bf.seconds.value_or(10);
  c.warmup_batches = bf.warmup_batches;
  c.consumer_step_ms = bf.consumer_step_ms;
  const bool terminal = isatty(fileno(stderr)) != 0;
  double next_plain_s = 5;
  bool drew = false;
  if (bf.progress) {
    c.on_progress = [&, label](const diag::BenchProgress& p) {
      char line[200];
      if (p.warming_up) {
        std::snprintf(line, sizeof(line), "%s: first batch after %.3f s; warming up (excluded)",
                      label, p.elapsed_s);
      } else {
        std::snprintf(line, sizeof(line), "%s: %5.1f s  %s batches  %s tokens/s", label,
                      p.elapsed_s, FormatCount(p.batches).c_str(),
                      diag::FormatSi(p.tokens_per_s).c_str());
      }
      if (terminal) {
        std::fprintf(stderr, "\r\033[K%s", line);
        drew = true;
      } else if (p.warming_up || p.elapsed_s >= next_plain_s) {
        std::fprintf(stderr, "%s\n", line);
        if (!p.warming_up) next_plain_s = p.elapsed_s + 5;
      }
    };
  }
  Result<diag::BenchResult> r = diag::RunBench(c);
  if (drew) std::fprintf(stderr, "\n");
  return r;
}

}  // namespace stoker::cli
