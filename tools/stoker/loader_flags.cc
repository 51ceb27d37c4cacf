#include "loader_flags.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "cli_common.h"
#include "common/cache_root.h"
#include "common/progress.h"
#include "diag/bench_report.h"
#include "flag_alias.h"
#include "loader/loader_options_table.h"
#include "number_flags.h"
#include "option_flags.h"
#include "stoker/plan.h"

namespace stoker::cli {

void AddLoaderFlags(CLI::App* sub, LoaderFlags* f) {
  AddPlanFlags(sub, f, PlanFlagsUse::kLoader);
  const OptionTable<LoaderOptions>& table = LoaderOptionTable();
  for (size_t i = LoaderOwnOptionsBegin(); i < table.size(); ++i) {
    if (!table[i].cli.empty() && sub->get_option_no_throw(std::string(table[i].cli)) != nullptr) {
      continue;  // --long-documents: the plan's flags have it
    }
    AddOptionFlag(sub, table[i], &f->options);
  }
  AddDeprecatedAlias(sub, "--workers", sub->get_option("--num-workers"), &f->options.num_workers,
                     WholeNumber<int>(0));
  CLI::Option* dir = sub->get_option("--cache-dir");
  dir->transform(LocalFile());
  dir->description(
      "Read remote datasets through a node-local disk cache in DIR (shared by the "
      "ranks of a node; look-ahead in plan order; default: shards/ in the cache "
      "root, " +
      std::string(kCacheRootRule) + ")");
  sub->add_flag("--no-cache", f->no_cache,
                "Read remote datasets by ranged GETs, without a cache (local data never uses one)")
      ->excludes(dir)
      ->excludes(sub->get_option("--cache-size"));
}

Result<LoaderOptions> ToLoaderOptions(const LoaderFlags& f) {
  LoaderOptions o = f.options;
  STOKER_ASSIGN_OR_RETURN(static_cast<PlanOptions&>(o), BuildPlanOptions(f));
  if (f.no_cache) {
    o.cache_dir = "";
  } else if (o.cache_dir.empty()) {
    o.cache_dir = "auto";
  }
  return o;
}

std::string DescribeLoaderFlags(const LoaderFlags& f, const LoaderOptions& o) {
  std::string s;
  for (const std::string& d : f.datasets) s += d + " ";
  const OptionTable<LoaderOptions>& table = LoaderOptionTable();
  s += DescribeOptions(table, o, {"seq_len", "batch_size"}).substr(1);
  s += " --num-workers " +
       (o.num_workers == 0 ? std::string("auto") : std::to_string(o.num_workers));
  s += DescribeOptions(table, o,
                       {"prefetch_factor", "shuffle", "pack", "seed", "world_size", "rank"});
  // The loader's other flags, where they differ from the default.
  const LoaderOptions defaults;
  for (size_t i = LoaderOwnOptionsBegin(); i < table.size(); ++i) {
    const OptionRow<LoaderOptions>& r = table[i];
    if (r.cli.empty() || !r.get || r.name == "num_workers" || r.name == "prefetch_factor" ||
        r.name == "cache_dir" || r.get(o) == r.get(defaults)) {
      continue;
    }
    s += " " + std::string(r.cli) + (r.kind == OptionKind::kBool ? "" : " " + r.get(o));
  }
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
