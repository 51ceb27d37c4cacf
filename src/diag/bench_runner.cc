#include "diag/bench_runner.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <utility>

#include "format/open_token_source.h"
#include "loader/remote_options.h"

namespace stoker::diag {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct CpuTimes {
  double user_s = 0, system_s = 0;
  uint64_t max_rss_bytes = 0;
};

CpuTimes ReadCpu() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  CpuTimes c;
  c.user_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6;
  c.system_s = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
  c.max_rss_bytes = static_cast<uint64_t>(ru.ru_maxrss) * 1024;  // Linux reports KiB
  return c;
}

Status Validate(const BenchConfig& c) {
  if (c.batches && *c.batches == 0) return InvalidArgument("--batches must be at least 1");
  if (!c.batches && !(c.seconds > 0)) return InvalidArgument("--seconds must be positive");
  if (!(c.consumer_step_ms >= 0)) return InvalidArgument("--consumer-step-ms must be >= 0");
  if (!(c.sample_interval_s > 0)) return InvalidArgument("sample interval must be positive");
  if (!c.synthetic && !c.open && c.datasets.empty()) return InvalidArgument("no dataset given");
  return Status::OK();
}

}  // namespace

Result<std::vector<LoaderDataset>> OpenDatasets(const std::vector<std::string>& args,
                                                const LoaderOptions& options) {
  std::vector<LoaderDataset> out;
  for (const std::string& arg : args) {
    LoaderDataset d;
    d.path = arg;
    const size_t colon = arg.find(':');
    if (colon != std::string::npos && colon > 0) {
      const std::string prefix = arg.substr(0, colon);
      char* end = nullptr;
      const double w = std::strtod(prefix.c_str(), &end);
      if (end == prefix.c_str() + prefix.size()) {
        if (!(w > 0))
          return InvalidArgument("weight '" + prefix + "' of '" + arg + "' must be > 0");
        d.weight = w;
        d.path = arg.substr(colon + 1);
      }
    }
    STOKER_ASSIGN_OR_RETURN(std::unique_ptr<TokenSource> source,
                            OpenTokenSource(d.path, RemoteOptionsFor(options)));
    d.source = std::move(source);
    out.push_back(std::move(d));
  }
  return out;
}

Result<BenchResult> RunBench(const BenchConfig& config) {
  STOKER_RETURN_IF_ERROR(Validate(config));
  BenchResult r;
  double weight_sum = 0, weighted_token_bytes = 0;
  for (const LoaderDataset& d : config.datasets) {
    if (config.synthetic || !d.source) continue;
    const size_t size = TokenDTypeSize(d.source->dtype());
    r.shards += d.source->num_shards();
    r.dataset_bytes += d.source->num_tokens() * size;
    weight_sum += d.weight;
    weighted_token_bytes += d.weight * size;
  }
  const double token_bytes = weight_sum > 0 ? weighted_token_bytes / weight_sum : 0;

  // The loader's own stall monitor judges the simulated training step. Without one there is no
  // training to judge (the loop takes batches as fast as they come), so it is kept quiet.
  const bool monitored = config.consumer_step_ms > 0;
  LoaderOptions options = config.options;
  if (!monitored) options.monitor_warnings = false;
  if (config.monitor_sink) options.monitor_sink = config.monitor_sink;
  const Clock::time_point open_start = Clock::now();
  Result<std::unique_ptr<Loader>> opened = config.synthetic ? Loader::OpenSynthetic(options)
                                           : config.open    ? config.open(options)
                                                         : Loader::Open(config.datasets, options);
  if (!opened.ok()) return opened.status();
  Loader& loader = **opened;
  r.open_s = SecondsSince(open_start);

  const auto step = std::chrono::duration<double, std::milli>(config.consumer_step_ms);

  // Warm-up: the first batch (cold) and a few more, so thread start-up and page faults of the
  // ring do not count. The simulated step runs here too: the monitor sees every batch, and a
  // training loop does not race through its first batches either.
  const uint64_t warmup =
      std::max<uint64_t>(1, config.warmup_batches.value_or(std::max<uint64_t>(
                                10, 2 * static_cast<uint64_t>(loader.Stats().ring_slots))));
  while (r.warmup_batches < warmup) {
    STOKER_ASSIGN_OR_RETURN(std::optional<LoaderBatch> b, loader.Next());
    if (!b) continue;  // end of an epoch: the next call starts the next one
    if (r.warmup_batches == 0) r.time_to_first_batch_s = SecondsSince(open_start);
    ++r.warmup_batches;
    if (monitored) std::this_thread::sleep_for(step);
    if (config.on_progress && r.warmup_batches == 1) {
      BenchProgress p;
      p.warming_up = true;
      p.elapsed_s = SecondsSince(open_start);
      config.on_progress(p);
    }
  }

  const LoaderStats s0 = loader.Stats();
  const CpuTimes cpu0 = ReadCpu();
  const Clock::time_point t0 = Clock::now();
  double sample_start_s = 0, sample_wait_s = 0;
  uint64_t sample_tokens = 0;
  const uint64_t tokens_per_batch = config.options.batch_size * config.options.seq_len;
  while (true) {
    const Clock::time_point before = Clock::now();
    STOKER_ASSIGN_OR_RETURN(std::optional<LoaderBatch> b, loader.Next());
    const double wait_s = SecondsSince(before);
    r.consumer_wait_s += wait_s;
    r.wait_max_ms = std::max(r.wait_max_ms, 1e3 * wait_s);
    sample_wait_s += wait_s;
    if (b) {
      ++r.batches;
      r.real_tokens += b->real_tokens();
      r.trained_tokens += b->trained_tokens();
      sample_tokens += tokens_per_batch;
      if (monitored) {
        const Clock::time_point step_start = Clock::now();
        std::this_thread::sleep_for(step);
        r.consumer_step_s += SecondsSince(step_start);
      }
    }
    const double elapsed = SecondsSince(t0);
    const bool done = config.batches ? r.batches >= *config.batches : elapsed >= config.seconds;
    if (elapsed - sample_start_s >= config.sample_interval_s || done) {
      const double dt = std::max(1e-9, elapsed - sample_start_s);
      BenchSample s;
      s.t_s = elapsed;
      s.tokens_per_s = sample_tokens / dt;
      s.stall_share = std::min(1.0, sample_wait_s / dt);
      s.slots_ready = loader.Stats().slots_ready;
      r.timeline.push_back(s);
      sample_start_s = elapsed;
      sample_wait_s = 0;
      sample_tokens = 0;
      if (config.on_progress) {
        BenchProgress p;
        p.elapsed_s = elapsed;
        p.batches = r.batches;
        p.tokens_per_s = r.batches * tokens_per_batch / std::max(1e-9, elapsed);
        p.stall_share = s.stall_share;
        config.on_progress(p);
      }
    }
    if (done) break;
  }
  r.wall_s = SecondsSince(t0);
  const CpuTimes cpu1 = ReadCpu();
  const LoaderStats s1 = loader.Stats();
  r.storage = s1.storage;
  const uint64_t requests = (s1.storage.get + s1.storage.head) - (s0.storage.get + s0.storage.head);
  r.requests_per_batch = r.batches > 0 ? static_cast<double>(requests) / r.batches : 0;
  r.storage_wait_s = (s1.storage.request_us - s0.storage.request_us) * 1e-6;
  r.mean_request_ms = requests > 0 ? 1e3 * r.storage_wait_s / requests : 0;

  r.samples = r.batches * config.options.batch_size;
  r.tokens = r.batches * tokens_per_batch;
  r.tokens_per_s = r.tokens / r.wall_s;
  r.samples_per_s = r.samples / r.wall_s;
  r.real_tokens_per_s = r.real_tokens / r.wall_s;
  if (r.tokens > 0) {
    r.real_token_share = double(r.real_tokens) / r.tokens;
    r.trained_token_share = double(r.trained_tokens) / r.tokens;
  }
  r.bytes_read = r.real_tokens * token_bytes;
  r.mb_per_s = r.bytes_read / 1e6 / r.wall_s;
  r.cpu_user_s = cpu1.user_s - cpu0.user_s;
  r.cpu_system_s = cpu1.system_s - cpu0.system_s;
  r.cpu_s = r.cpu_user_s + r.cpu_system_s;
  r.peak_rss_bytes = cpu1.max_rss_bytes;
  r.read_s = s1.read_s - s0.read_s;
  r.assemble_s = s1.assemble_s - s0.assemble_s;
  r.copy_s = s1.copy_s - s0.copy_s;
  const double cycle_s = r.consumer_wait_s + r.consumer_step_s;
  r.stall_share = monitored && cycle_s > 0 ? r.consumer_wait_s / cycle_s : 0;
  r.consumer_step_ms = config.consumer_step_ms;
  r.mean_slots_ready = s1.batches > s0.batches
                           ? (s1.mean_slots_ready * s1.batches - s0.mean_slots_ready * s0.batches) /
                                 (s1.batches - s0.batches)
                           : 0;
  r.workers = config.synthetic ? 0 : s1.num_workers;
  r.ring_slots = s1.ring_slots;
  r.pinned = s1.pinned;
  r.device_batches = s1.device_batches;
  r.monitor_warnings = monitored ? s1.monitor_warnings : 0;
  return r;
}

}  // namespace stoker::diag
