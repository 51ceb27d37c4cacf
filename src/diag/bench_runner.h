// RunBench: the loader-only experiment. Iterates a real (or synthetic) Loader with no training,
// optionally sleeping a simulated training step per batch, and measures what it delivered after
// a warm-up: rates, time to first batch, CPU, peak RSS, per-stage times, and a timeline for plots.
// Not thread-safe: one call at a time per config (the progress callback runs on the calling
// thread).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "stoker/loader.h"
#include "stoker/status.h"

namespace stoker::diag {

struct BenchConfig {
  std::vector<LoaderDataset> datasets;  // ignored when synthetic
  LoaderOptions options;
  bool synthetic = false;
  // Opens the loader instead of Loader::Open(datasets) when set (the streaming path, src/stream/,
  // which diag does not depend on); `datasets` may then be empty.
  std::function<Result<std::unique_ptr<Loader>>(const LoaderOptions&)> open;
  // How long to measure after the warm-up: a batch count, or else seconds.
  std::optional<uint64_t> batches;
  double seconds = 10;
  // Delivered before measuring, excluded from every figure; unset: max(10, 2 x ring slots), so
  // the batches prefetched while the loader started do not inflate the rate.
  std::optional<uint64_t> warmup_batches;
  double consumer_step_ms = 0;      // > 0: sleep this long per batch, like a training step
  double sample_interval_s = 0.25;  // timeline resolution
  // Called every sample interval (and once at the end) with the figures so far.
  std::function<void(const struct BenchProgress&)> on_progress;
  // With a consumer step, the loader's own stall monitor judges it (warm-up included): this
  // receives its warnings (default: stderr). Without a step the monitor is kept quiet.
  std::function<void(const std::string&)> monitor_sink;
};

struct BenchProgress {
  bool warming_up = false;
  double elapsed_s = 0;  // since measuring began (or since open while warming up)
  uint64_t batches = 0;  // measured so far
  double tokens_per_s = 0;
  double stall_share = 0;
};

// One point of the timeline, over the interval ending at t_s (seconds since measuring began).
struct BenchSample {
  double t_s = 0;
  double tokens_per_s = 0;
  double stall_share = 0;  // consumer wait / interval
  double slots_ready = 0;  // ring slots filled and waiting, at the sample
};

struct BenchResult {
  // Measured window (warm-up excluded).
  uint64_t warmup_batches = 0;
  uint64_t batches = 0;
  uint64_t samples = 0;
  uint64_t tokens = 0;
  uint64_t real_tokens = 0;
  uint64_t trained_tokens = 0;  // labels that are not -100 (chat data: the loss mask's)
  double wall_s = 0;
  double tokens_per_s = 0;
  double samples_per_s = 0;
  double real_tokens_per_s = 0;
  double real_token_share = 0;     // real tokens / positions
  double trained_token_share = 0;  // trained labels / positions
  double bytes_read = 0;           // token bytes read from the datasets (real tokens x token size)
  double mb_per_s = 0;             // bytes_read / wall, 1e6 bytes
  double time_to_first_batch_s = 0;  // Open + first Next, cold
  double open_s = 0;
  double cpu_s = 0;  // user + system, whole process
  double cpu_user_s = 0;
  double cpu_system_s = 0;
  uint64_t peak_rss_bytes = 0;
  // Stage totals over all threads in the window; tokenize is < 0 (not applicable) for token data.
  double read_s = 0;
  double tokenize_s = -1;
  double assemble_s = 0;
  double copy_s = 0;
  double consumer_wait_s = 0;   // the data stall
  double consumer_step_s = 0;   // simulated training time
  double consumer_step_ms = 0;  // the simulated step asked for (0: loader only)
  double stall_share = 0;       // wait / (wait + step); only meaningful with a step
  double wait_max_ms = 0;
  double mean_slots_ready = 0;
  // Setting.
  int workers = 0;
  int ring_slots = 0;
  bool pinned = false;
  bool device_batches = false;
  uint64_t shards = 0;
  uint64_t dataset_bytes = 0;
  uint64_t monitor_warnings = 0;  // the loader's monitor, since open; 0 without a consumer step
  // Remote storage requests since the datasets were opened (open, warm-up and measurement).
  StorageStats storage;
  // In the measured window: requests (GET + HEAD) per batch delivered, the time they took summed
  // over every thread that waited on them (workers and cache downloads), and their mean duration.
  double requests_per_batch = 0;
  double storage_wait_s = 0;
  double mean_request_ms = 0;
  std::vector<BenchSample> timeline;
};

// Opens the loader from `config`, runs warm-up and measurement, and returns the figures.
// Errors: the loader's (naming the dataset), or kInvalidArgument for a bad config.
Result<BenchResult> RunBench(const BenchConfig& config);

// Opens "[WEIGHT:]PATH" arguments as loader datasets (sources opened once, here). A prefix that
// is not a number is part of the path; a numeric weight must be > 0.
// Remote datasets are read as a loader with `options` reads them (loader/remote_options.h).
Result<std::vector<LoaderDataset>> OpenDatasets(const std::vector<std::string>& args,
                                                const LoaderOptions& options = {});

}  // namespace stoker::diag
