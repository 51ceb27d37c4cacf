// The doctor's arithmetic: what training consumes (the 6·N·tokens rule), the 1.2x verdict against
// what the loader delivered, the slowest stage, and advice that follows from the measurements.
// Pure functions of their inputs (no clock, no files): thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/status.h"

namespace stoker::diag {

// The ratio delivered / consumed at or above which the GPU will not wait for data.
inline constexpr double kMinHeadroom = 1.2;

struct GpuSpec {
  std::string_view name;         // "h100"
  std::string_view description;  // "H100 SXM"
  double peak_dense_bf16_flops;  // per GPU, dense (no sparsity)
};

// Every GPU type --gpu accepts, in a fixed order.
const std::vector<GpuSpec>& KnownGpus();
// Looks `name` up case-insensitively; kInvalidArgument lists the known names.
Result<GpuSpec> FindGpu(std::string_view name);
// "1.3B", "350M", "70b", "7e9", "125000000" -> parameters. kInvalidArgument unless > 0.
Result<double> ParseParamCount(std::string_view text);

// How the consumption was given.
struct TrainingRate {
  enum class Kind { kTokensPerS, kSamplesPerS, kModel } kind = Kind::kTokensPerS;
  double value = 0;          // tokens/s or samples/s (kTokensPerS, kSamplesPerS)
  double model_params = 0;   // kModel: N
  int gpus = 0;              // kModel: GPUs fed by this machine's loader
  std::string gpu = "h100";  // kModel
  double mfu = 0.4;          // kModel: model FLOPs utilization, (0, 1]
};

struct Consumption {
  double tokens_per_s = 0;
  double samples_per_s = 0;
  double flops_per_token = 0;  // 6 N (kModel only)
  double peak_flops_per_gpu = 0;
  std::string explanation;  // the formula with the numbers put in
};

// tokens/s = gpus * mfu * peak_flops / (6 * N) for kModel; samples/s = tokens/s / seq_len.
// kInvalidArgument for non-positive rates, mfu outside (0, 1], gpus < 1, an unknown GPU.
Result<Consumption> ComputeConsumption(const TrainingRate& rate, uint64_t seq_len);

// What the bench measured and the setting it ran in: the facts advice is derived from.
struct Measurement {
  double tokens_per_s = 0;  // delivered by the loader alone
  double wall_s = 0;        // measured window (warm-up excluded)
  uint64_t batches = 0;
  double cpu_s = 0;        // user + system over the window
  double read_s = 0;       // stage totals over all worker threads
  double tokenize_s = -1;  // < 0: not applicable (pretokenized data)
  double assemble_s = 0;
  double copy_s = 0;
  double mean_slots_ready = 0;  // ring occupancy seen by the consumer
  int ring_slots = 0;
  int workers = 0;
  int cores = 0;  // hardware threads of this machine
  int prefetch_factor = 2;
  bool global_shuffle = false;
  bool attention_mask = false;
  uint64_t shards = 0;         // over every dataset
  uint64_t dataset_bytes = 0;  // token bytes over every dataset
  // Remote data (bench's storage figures over the window). ranged_reads: some dataset is read by
  // ranged GETs of its document pieces (global shuffle with no cache, cache_budget_bytes = 0, or a
  // budget below its ranged_bytes); whole_shards_cached: some dataset's shards are fetched whole
  // into the node-local cache.
  bool remote = false;
  double requests_per_batch = 0;
  double storage_wait_s = 0;  // request time summed over every thread
  double mean_request_ms = 0;
  bool ranged_reads = false;
  // Requests the loader's read-ahead keeps in flight for the ranged datasets, besides the
  // workers' own (loader/piece_prefetcher.h).
  int read_ahead_requests = 0;
  uint64_t ranged_bytes = 0;
  uint64_t cache_budget_bytes = 0;
  bool whole_shards_cached = false;
};

struct Verdict {
  double ratio = 0;  // delivered / consumed
  bool pass = false;
  std::string slowest_stage;  // "read", "tokenize", "assemble" or "host->device copy"
  double slowest_stage_s = 0;
  double slowest_stage_share = 0;   // of the summed stage times
  std::vector<std::string> advice;  // concrete, most useful first
  // Request latency limits delivery: the request slots (the read-ahead's and the workers') are
  // busy most of the window with ranged reads of single document pieces.
  bool latency_bound = false;
};

Verdict Diagnose(const Measurement& m, const Consumption& c);

}  // namespace stoker::diag
