#include "diag/bench_report.h"

#include <cmath>
#include <cstdio>

#include "common/human_size.h"
#include "stoker/plan.h"

namespace stoker::diag {

std::string FormatSi(double x) {
  static const char* kUnits[] = {"", " k", " M", " G", " T", " P", " E"};
  int u = 0;
  while (std::fabs(x) >= 1000 && u < 6) {
    x /= 1000;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.3g%s", x, kUnits[u]);
  return buf;
}

std::vector<Figure> BenchFigures(const BenchResult& r) {
  using K = Figure::Kind;
  const double cores_used = r.wall_s > 0 ? r.cpu_s / r.wall_s : 0;
  // Remote data: any request made, or any dataset read remotely (a warm cache makes none).
  const bool remote = r.storage.get + r.storage.head > 0 || r.storage.ranged_datasets > 0 ||
                      r.storage.whole_shard_datasets > 0;
  return {
      {"warmup_batches", "warm-up batches (excluded)", double(r.warmup_batches), true, K::kCount},
      {"batches", "batches measured", double(r.batches), true, K::kCount},
      {"wall_s", "measured time", r.wall_s, true, K::kSeconds},
      {"samples_per_s", "samples/s", r.samples_per_s, true, K::kRate},
      {"tokens_per_s", "tokens/s", r.tokens_per_s, true, K::kRate},
      {"real_tokens_per_s", "real (non-padding) tokens/s", r.real_tokens_per_s, true, K::kRate},
      {"real_token_share", "real-token share", r.real_token_share, true, K::kShare},
      {"trained_token_share", "trained-token share (labels not -100)", r.trained_token_share, true,
       K::kShare},
      {"mb_per_s", "MB/s read", r.mb_per_s, true, K::kRate},
      {"time_to_first_batch_s", "time to first batch", r.time_to_first_batch_s, true, K::kSeconds},
      {"cpu_s", "CPU time (user + system)", r.cpu_s, true, K::kSeconds},
      {"cpu_cores_used", "CPU cores busy (mean)", cores_used, true, K::kRate},
      {"peak_rss_bytes", "peak RSS", double(r.peak_rss_bytes), true, K::kBytes},
      {"read_s", "stage read", r.read_s, true, K::kSeconds},
      {"tokenize_s", "stage tokenize", r.tokenize_s, r.tokenize_s >= 0, K::kSeconds},
      {"assemble_s", "stage assemble", r.assemble_s, true, K::kSeconds},
      {"copy_s", "stage host->device copy", r.copy_s, r.device_batches, K::kSeconds},
      {"consumer_wait_s", "consumer wait (data stall)", r.consumer_wait_s, true, K::kSeconds},
      {"stall_share", "stall share (wait / step cycle)", r.stall_share, r.consumer_step_ms > 0,
       K::kShare},
      {"wait_max_ms", "longest wait (ms)", r.wait_max_ms, true, K::kRate},
      {"requests_per_batch", "storage requests per batch", r.requests_per_batch, remote, K::kRate},
      {"storage_wait_s", "waiting on storage (all threads)", r.storage_wait_s, remote, K::kSeconds},
      {"mean_request_ms", "mean request time (ms)", r.mean_request_ms, remote, K::kRate},
  };
}

std::string FormatFigure(const Figure& f) {
  if (!f.applicable) return "n/a";
  char buf[64];
  switch (f.kind) {
    case Figure::Kind::kBytes:
      return FormatSize(static_cast<uint64_t>(f.value));
    case Figure::Kind::kCount:
      std::snprintf(buf, sizeof(buf), "%.0f", f.value);
      return buf;
    case Figure::Kind::kSeconds:
      std::snprintf(buf, sizeof(buf), "%.3f s", f.value);
      return buf;
    case Figure::Kind::kShare:
      std::snprintf(buf, sizeof(buf), "%.1f%%", 100 * f.value);
      return buf;
    case Figure::Kind::kRate:
      return FormatSi(f.value);
  }
  return "";
}

std::string RenderBenchTable(const BenchResult& r) {
  std::string out;
  char line[160];
  std::vector<Figure> rows;  // the "stage ..." figures, in the stage table below
  double total = 0;          // their applicable seconds
  for (Figure& f : BenchFigures(r)) {
    if (f.label.rfind("stage ", 0) == 0) {
      total += f.applicable ? f.value : 0;
      rows.push_back(std::move(f));
      continue;
    }
    std::snprintf(line, sizeof(line), "  %-30s %14s\n", f.label.c_str(), FormatFigure(f).c_str());
    out += line;
  }
  std::snprintf(line, sizeof(line), "  %-20s %12s %12s %8s\n", "stage (all threads)", "seconds",
                "ms/batch", "share");
  out += line;
  for (const Figure& row : rows) {
    const char* name = row.label.c_str() + 6;  // after "stage "
    if (!row.applicable) {
      std::snprintf(line, sizeof(line), "  %-20s %12s %12s %8s\n", name, "n/a", "n/a", "");
    } else {
      std::snprintf(line, sizeof(line), "  %-20s %12.3f %12.4f %7.1f%%\n", name, row.value,
                    r.batches ? 1e3 * row.value / r.batches : 0,
                    total > 0 ? 100 * row.value / total : 0);
    }
    out += line;
  }
  return out;
}

nlohmann::json BenchJson(const BenchResult& r, const LoaderOptions& o, bool synthetic,
                         double consumer_step_ms) {
  nlohmann::json j = nlohmann::json::object();
  for (const Figure& f : BenchFigures(r)) {
    if (!f.applicable) {
      j[f.key] = nullptr;
    } else if (f.kind == Figure::Kind::kCount || f.kind == Figure::Kind::kBytes) {
      j[f.key] = static_cast<uint64_t>(f.value);
    } else {
      j[f.key] = f.value;
    }
  }
  j["warmup_excluded"] = true;
  j["tokens"] = r.tokens;
  j["samples"] = r.samples;
  j["cpu_user_s"] = r.cpu_user_s;
  j["cpu_system_s"] = r.cpu_system_s;
  j["open_s"] = r.open_s;
  j["mean_slots_ready"] = r.mean_slots_ready;
  j["monitor_warnings"] = r.monitor_warnings;
  j["storage"] = {{"requests",
                   {{"GET", r.storage.get},
                    {"HEAD", r.storage.head},
                    {"LIST", r.storage.list},
                    {"PUT", r.storage.put}}},
                  {"failed_requests", r.storage.failed},
                  {"retries", r.storage.retries},
                  {"bytes_read", r.storage.bytes_read},
                  {"cache_hits", r.storage.cache_hits},
                  {"request_s", r.storage.request_us * 1e-6},
                  {"read_mode", r.storage.ranged_datasets > 0        ? "ranged"
                                : r.storage.whole_shard_datasets > 0 ? "whole_shards"
                                                                     : "local"},
                  {"ranged_datasets", r.storage.ranged_datasets},
                  {"whole_shard_datasets", r.storage.whole_shard_datasets},
                  {"pieces_read_ahead", r.storage.pieces_read_ahead},
                  {"pieces_read_on_demand", r.storage.pieces_read_on_demand},
                  {"read_ahead_requests", r.storage.read_ahead_requests}};
  j["setting"] = {{"synthetic", synthetic},
                  {"seq_len", o.seq_len},
                  {"batch_size", o.batch_size},
                  {"workers", r.workers},
                  {"prefetch_factor", o.prefetch_factor},
                  {"ring_slots", r.ring_slots},
                  {"shuffle", std::string(ShuffleModeName(o.shuffle))},
                  {"pack", std::string(PackModeName(o.pack))},
                  {"seed", o.seed},
                  {"world_size", o.world_size},
                  {"rank", o.rank},
                  {"pinned", r.pinned},
                  {"device_batches", r.device_batches},
                  {"consumer_step_ms", consumer_step_ms},
                  {"shards", r.shards},
                  {"dataset_bytes", r.dataset_bytes}};
  return j;
}

}  // namespace stoker::diag
