#include "diag/doctor.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "diag/bench_report.h"

namespace stoker::diag {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

template <typename... Args>
std::string Format(const char* fmt, Args... args) {
  char buf[512];
  std::snprintf(buf, sizeof(buf), fmt, args...);
  return buf;
}

}  // namespace

const std::vector<GpuSpec>& KnownGpus() {
  // Peak dense (no 2:4 sparsity) bf16 tensor FLOP/s per GPU from the vendors' datasheets.
  static const std::vector<GpuSpec> kGpus = {
      {"a100", "A100 (SXM or PCIe)", 312e12},
      {"h100", "H100 SXM", 989e12},
      {"h100-pcie", "H100 PCIe", 756e12},
      {"h200", "H200 SXM", 989e12},
      {"b200", "B200", 2250e12},
      {"l40s", "L40S", 362e12},
      {"l4", "L4", 121e12},
      {"a10", "A10", 125e12},
      {"v100", "V100 SXM (fp16; no bf16)", 125e12},
      {"mi300x", "AMD MI300X", 1307e12},
  };
  return kGpus;
}

Result<GpuSpec> FindGpu(std::string_view name) {
  const std::string key = Lower(name);
  std::string known;
  for (const GpuSpec& g : KnownGpus()) {
    if (g.name == key) return g;
    known += (known.empty() ? "" : ", ") + std::string(g.name);
  }
  return InvalidArgument("unknown GPU type '" + std::string(name) + "' (known: " + known + ")");
}

Result<double> ParseParamCount(std::string_view text) {
  // Suffixes (either case) and their scale.
  static constexpr std::pair<char, double> kSuffixes[] = {
      {'k', 1e3}, {'m', 1e6}, {'b', 1e9}, {'t', 1e12}};
  std::string s(text);
  double scale = 1;
  for (const auto& [suffix, value] : kSuffixes) {
    if (!s.empty() && std::tolower(static_cast<unsigned char>(s.back())) == suffix) {
      scale = value;
      s.pop_back();
      break;
    }
  }
  char* end = nullptr;
  const double x = s.empty() ? 0 : std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(x) || !(x > 0)) {
    return InvalidArgument("model size '" + std::string(text) +
                           "' is not a positive parameter count (e.g. 1.3B, 350M, 7e9)");
  }
  return x * scale;
}

Result<Consumption> ComputeConsumption(const TrainingRate& rate, uint64_t seq_len) {
  if (seq_len == 0) return InvalidArgument("seq_len must be at least 1");
  Consumption c;
  switch (rate.kind) {
    case TrainingRate::Kind::kTokensPerS:
      if (!(rate.value > 0) || !std::isfinite(rate.value)) {
        return InvalidArgument("--train-tokens-per-s must be a positive number");
      }
      c.tokens_per_s = rate.value;
      c.explanation = "training consumes " + FormatSi(c.tokens_per_s) + " tokens/s (given)";
      break;
    case TrainingRate::Kind::kSamplesPerS:
      if (!(rate.value > 0) || !std::isfinite(rate.value)) {
        return InvalidArgument("--train-samples-per-s must be a positive number");
      }
      c.tokens_per_s = rate.value * static_cast<double>(seq_len);
      c.explanation = Format("training consumes %s samples/s x %llu tokens = %s tokens/s (given)",
                             FormatSi(rate.value).c_str(), static_cast<unsigned long long>(seq_len),
                             FormatSi(c.tokens_per_s).c_str());
      break;
    case TrainingRate::Kind::kModel: {
      if (!(rate.model_params > 0)) return InvalidArgument("--model-params must be positive");
      if (rate.gpus < 1) return InvalidArgument("--gpus must be at least 1");
      if (!(rate.mfu > 0) || rate.mfu > 1) return InvalidArgument("--mfu must be in (0, 1]");
      STOKER_ASSIGN_OR_RETURN(GpuSpec gpu, FindGpu(rate.gpu));
      c.flops_per_token = 6 * rate.model_params;
      c.peak_flops_per_gpu = gpu.peak_dense_bf16_flops;
      c.tokens_per_s = rate.gpus * rate.mfu * gpu.peak_dense_bf16_flops / c.flops_per_token;
      c.explanation = Format(
          "training consumes gpus x MFU x peak / (6 x N) = %d x %.2f x %sFLOP/s (%.*s peak dense "
          "bf16) / (6 x %sparams) = %s tokens/s (6N FLOPs per token: forward 2N + backward 4N; "
          "attention FLOPs ignored)",
          rate.gpus, rate.mfu, FormatSi(gpu.peak_dense_bf16_flops).c_str(),
          static_cast<int>(gpu.description.size()), gpu.description.data(),
          FormatSi(rate.model_params).c_str(), FormatSi(c.tokens_per_s).c_str());
      break;
    }
  }
  c.samples_per_s = c.tokens_per_s / static_cast<double>(seq_len);
  return c;
}

Verdict Diagnose(const Measurement& m, const Consumption& c) {
  Verdict v;
  v.ratio = c.tokens_per_s > 0 ? m.tokens_per_s / c.tokens_per_s : 0;
  v.pass = v.ratio >= kMinHeadroom;

  struct Stage {
    const char* name;
    double s;
  };
  const Stage stages[] = {{"read", m.read_s},
                          {"tokenize", std::max(0.0, m.tokenize_s)},
                          {"assemble", m.assemble_s},
                          {"host->device copy", m.copy_s}};
  double total = 0;
  for (const Stage& s : stages) total += s.s;
  const Stage* slowest = std::max_element(std::begin(stages), std::end(stages),
                                          [](const Stage& a, const Stage& b) { return a.s < b.s; });
  v.slowest_stage = slowest->name;
  v.slowest_stage_s = slowest->s;
  v.slowest_stage_share = total > 0 ? slowest->s / total : 0;

  if (v.pass) {
    v.advice.push_back(Format("%.2fx headroom over the %.1fx rule: the GPU will not wait for data.",
                              v.ratio / kMinHeadroom, kMinHeadroom));
    return v;
  }
  const double needed = v.ratio > 0 ? kMinHeadroom / v.ratio : INFINITY;
  v.advice.push_back(
      Format("The loader must become %.2fx faster (or training consume less) to "
             "reach %.1fx.",
             needed, kMinHeadroom));
  const double wall = m.wall_s > 0 ? m.wall_s : 1;
  const double cores_used = m.cpu_s / wall;
  const bool cpu_saturated = m.cores > 0 && cores_used >= 0.85 * m.cores;
  // Worker threads that were busy in a stage, on average: below the worker count means they
  // waited (for I/O or a free slot), not computed.
  const double worker_stage_s = m.read_s + std::max(0.0, m.tokenize_s) + m.assemble_s;

  if (m.workers > 0 && m.cores > m.workers) {
    const double gain = static_cast<double>(m.cores) / m.workers;
    v.advice.push_back(
        Format("More workers: --workers %d (now %d of %d hardware threads); the "
               "worker stages scale with threads, up to %.1fx here%s.",
               m.cores, m.workers, m.cores, gain,
               gain >= needed ? ", which would be enough" : ", not enough alone"));
  }
  if (m.tokenize_s > 0 && v.slowest_stage == "tokenize") {
    v.advice.push_back(
        "Tokenizing online is the slowest stage: pretokenize once with `stoker "
        "pack` and train from the token shards.");
  }
  // Workers that are busy computing keep about one core each; workers blocked on I/O do not.
  const bool io_wait = m.workers > 0 && cores_used < 0.7 * m.workers;
  // Ranged reads are made by the read-ahead's requests in flight and by each worker, one at a
  // time: when the request time per slot fills half the window or more, the request latency is
  // what bounds delivery.
  const int slots = m.workers + m.read_ahead_requests;
  v.latency_bound = m.ranged_reads && slots > 0 && m.storage_wait_s / slots >= 0.5 * wall;
  if (v.latency_bound) {
    const double per_batch_s = m.batches > 0 ? wall / m.batches : 0;
    const std::string cause =
        m.cache_budget_bytes == 0
            ? "it has no cache (--no-cache): read through a cache whose budget holds its " +
                  FormatSi(m.ranged_bytes) + "B (--cache-size)"
            : "its " + FormatSi(m.ranged_bytes) + "B exceed the cache budget of " +
                  FormatSi(m.cache_budget_bytes) + "B: with --cache-size " +
                  FormatSi(m.ranged_bytes) + "B or more";
    v.advice.push_back(Format(
        "Request latency limits delivery: %.1f requests per batch at %.1f ms each, %d at a time "
        "(%d read ahead, %d workers), is %.0f ms of every %.0f ms batch. Under global shuffle "
        "the dataset is read by ranged GETs of its document pieces because %s, whole shards are "
        "fetched ahead into the cache, several at once, and read from local disk; or use "
        "--shuffle block (whole shards in plan order).",
        m.requests_per_batch, m.mean_request_ms, slots, m.read_ahead_requests, m.workers,
        m.requests_per_batch * m.mean_request_ms / slots, 1e3 * per_batch_s, cause.c_str()));
  }
  if (v.slowest_stage == "read" && io_wait && !v.latency_bound) {
    const double read_share = worker_stage_s > 0 ? m.read_s / worker_stage_s : 0;
    const char* where =
        !m.remote ? "Copy the data to a local NVMe cache (or keep it in the page cache)."
        : m.whole_shards_cached
            ? "The node-local cache is fetching whole shards (a cold cache: the first epoch); "
              "once they are in, reads come from local disk (`stoker prefetch` stages them "
              "before training)."
            : "Read it through the node-local cache (--cache-dir, --cache-size).";
    v.advice.push_back(Format(
        "Reads take %.0f%% of the worker time while the %d workers kept only %.1f cores busy: "
        "they wait on storage. %s",
        100 * read_share, m.workers, cores_used, where));
    if (m.global_shuffle && !m.whole_shards_cached) {
      v.advice.push_back(
          "--shuffle block reads a few shards at a time instead of seeking across "
          "all of them: sequential reads for disks and remote storage.");
    }
    if (m.shards > 0 && m.dataset_bytes / m.shards < (100ull << 20)) {
      v.advice.push_back(
          Format("Shards average %.1f MB (%llu shards): pack into larger shards "
                 "(~100 MB or more) with `stoker pack` so reads are fewer and larger.",
                 m.dataset_bytes / 1e6 / m.shards, static_cast<unsigned long long>(m.shards)));
    }
  }
  if (v.slowest_stage == "assemble" && m.attention_mask) {
    v.advice.push_back(
        "Assembly builds a dense [B, S, S] attention mask: use cu_seqlens / "
        "segment_ids with varlen attention instead.");
  }
  if (v.slowest_stage == "host->device copy") {
    v.advice.push_back(
        "The host->device copy is the slowest stage: keep pin_memory on, use 3 "
        "device buffers, and check the PCIe link (nvidia-smi topo -m).");
  }
  if (cpu_saturated) {
    v.advice.push_back(
        Format("All %d cores are busy (%.1f in use): this machine's CPU is the "
               "limit; use int32 token ids, fewer GPUs per loader host, or more "
               "CPU per GPU.",
               m.cores, cores_used));
  }
  return v;
}

}  // namespace stoker::diag
