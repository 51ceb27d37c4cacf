// `stoker doctor`: will the GPU wait for data? Works out what training consumes (given, or from
// the 6·N·tokens rule), runs the bench, and prints the ratio delivered / consumed, PASS at >= 1.2x
// else FAIL, the slowest stage and advice derived from the measurements.
// Exit code: 0 PASS, 1 FAIL, 2 error.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

#include "cli_common.h"
#include "commands.h"
#include "diag/bench_report.h"
#include "diag/doctor.h"
#include "diag/doctor_report.h"
#include "loader_flags.h"
#include "number_flags.h"

namespace stoker::cli {
namespace {

struct DoctorArgs {
  LoaderFlags loader;
  BenchFlags bench;
  std::optional<double> train_tokens_per_s;
  std::optional<double> train_samples_per_s;
  std::string model_params;
  std::optional<int> gpus;
  std::string gpu = "h100";
  double mfu = 0.4;
  bool json = false;
  std::string report;  // FILE.html, or empty
};

Result<diag::TrainingRate> BuildRate(const DoctorArgs& a) {
  const int given = int(a.train_tokens_per_s.has_value()) + int(a.train_samples_per_s.has_value()) +
                    int(!a.model_params.empty());
  if (given != 1) {
    return InvalidArgument(
        "give exactly one of --train-tokens-per-s, --train-samples-per-s, or "
        "--model-params with --gpus");
  }
  diag::TrainingRate r;
  if (a.train_tokens_per_s) {
    r.kind = diag::TrainingRate::Kind::kTokensPerS;
    r.value = *a.train_tokens_per_s;
  } else if (a.train_samples_per_s) {
    r.kind = diag::TrainingRate::Kind::kSamplesPerS;
    r.value = *a.train_samples_per_s;
  } else {
    if (!a.gpus) return InvalidArgument("--model-params needs --gpus N");
    r.kind = diag::TrainingRate::Kind::kModel;
    STOKER_ASSIGN_OR_RETURN(r.model_params, diag::ParseParamCount(a.model_params));
    r.gpus = *a.gpus;
    r.gpu = a.gpu;
    r.mfu = a.mfu;
  }
  return r;
}

diag::Measurement ToMeasurement(const diag::BenchResult& b, const LoaderOptions& o) {
  diag::Measurement m;
  m.tokens_per_s = b.tokens_per_s;
  m.wall_s = b.wall_s;
  m.batches = b.batches;
  m.cpu_s = b.cpu_s;
  m.read_s = b.read_s;
  m.tokenize_s = b.tokenize_s;
  m.assemble_s = b.assemble_s;
  m.copy_s = b.copy_s;
  m.mean_slots_ready = b.mean_slots_ready;
  m.ring_slots = b.ring_slots;
  m.workers = b.workers;
  m.cores = static_cast<int>(std::thread::hardware_concurrency());
  m.prefetch_factor = o.prefetch_factor;
  m.global_shuffle = o.shuffle == ShuffleMode::kGlobal;
  m.attention_mask = o.attention_mask;
  m.shards = b.shards;
  m.dataset_bytes = b.dataset_bytes;
  m.remote = b.storage.get + b.storage.head > 0 || b.storage.ranged_datasets > 0 ||
             b.storage.whole_shard_datasets > 0;
  m.requests_per_batch = b.requests_per_batch;
  m.storage_wait_s = b.storage_wait_s;
  m.mean_request_ms = b.mean_request_ms;
  m.ranged_reads = b.storage.ranged_datasets > 0;
  m.read_ahead_requests = static_cast<int>(b.storage.read_ahead_requests);
  m.ranged_bytes = b.storage.ranged_bytes;
  m.cache_budget_bytes = b.storage.ranged_cache_budget;
  m.whole_shards_cached = b.storage.whole_shard_datasets > 0;
  return m;
}

int RunDoctor(DoctorArgs& a) {
  Result<LoaderOptions> options = ToLoaderOptions(a.loader);
  if (!options.ok()) return ReportError("doctor", options.status());
  Result<diag::TrainingRate> rate = BuildRate(a);
  if (!rate.ok()) return ReportError("doctor", rate.status());
  // Checked before the bench runs so a bad GPU name or rate fails at once.
  Result<diag::Consumption> consumption = diag::ComputeConsumption(*rate, options->seq_len);
  if (!consumption.ok()) return ReportError("doctor", consumption.status());
  Result<diag::BenchResult> bench = RunBenchFromFlags(a.loader, *options, a.bench, "doctor");
  if (!bench.ok()) return ReportError("doctor", bench.status());
  const diag::Verdict v = diag::Diagnose(ToMeasurement(*bench, *options), *consumption);
  const int code = v.pass ? kExitOk : kExitCheckFailed;
  if (!a.report.empty()) {
    Status st = diag::WriteDoctorReportHtml(*bench, *consumption, v,
                                            DescribeLoaderFlags(a.loader, *options), a.report);
    if (!st.ok()) return ReportError("doctor", st);
  }
  if (a.json) {
    nlohmann::json j = {
        {"verdict", v.pass ? "PASS" : "FAIL"},
        {"pass", v.pass},
        {"ratio", v.ratio},
        {"min_ratio", diag::kMinHeadroom},
        {"delivered_tokens_per_s", bench->tokens_per_s},
        {"consumed_tokens_per_s", consumption->tokens_per_s},
        {"consumed_samples_per_s", consumption->samples_per_s},
        {"consumption", consumption->explanation},
        {"slowest_stage", v.slowest_stage},
        {"slowest_stage_s", v.slowest_stage_s},
        {"slowest_stage_share", v.slowest_stage_share},
        {"advice", v.advice},
        {"latency_bound", v.latency_bound},
        {"bench", diag::BenchJson(*bench, *options, false, a.bench.consumer_step_ms)}};
    if (consumption->peak_flops_per_gpu > 0) {
      j["peak_flops_per_gpu"] = consumption->peak_flops_per_gpu;
      j["flops_per_token"] = consumption->flops_per_token;
    }
    std::printf("%s\n", j.dump().c_str());
    return code;
  }
  std::printf("stoker doctor: %s\n", DescribeLoaderFlags(a.loader, *options).c_str());
  std::printf("consumption: %s\n", consumption->explanation.c_str());
  std::printf("  = %s tokens/s = %s samples/s of %llu tokens\n",
              diag::FormatSi(consumption->tokens_per_s).c_str(),
              diag::FormatSi(consumption->samples_per_s).c_str(),
              static_cast<unsigned long long>(options->seq_len));
  std::printf(
      "bench (loader only; warm-up of %llu batches excluded; %llu batches in %.2f s; "
      "%d workers):\n",
      static_cast<unsigned long long>(bench->warmup_batches),
      static_cast<unsigned long long>(bench->batches), bench->wall_s, bench->workers);
  std::printf("%s", diag::RenderBenchTable(*bench).c_str());
  std::printf("ratio delivered / consumed: %s / %s tokens/s = %.2fx (rule: >= %.1fx)\n",
              diag::FormatSi(bench->tokens_per_s).c_str(),
              diag::FormatSi(consumption->tokens_per_s).c_str(), v.ratio, diag::kMinHeadroom);
  std::printf("verdict: %s\n", v.pass ? "PASS" : "FAIL: the GPU will wait for data");
  std::printf("slowest stage: %s (%.0f%% of stage time, %.3f s over all threads)\n",
              v.slowest_stage.c_str(), 100 * v.slowest_stage_share, v.slowest_stage_s);
  std::printf("advice:\n");
  for (const std::string& line : v.advice) std::printf("  - %s\n", line.c_str());
  if (!a.report.empty()) std::printf("report written to %s\n", a.report.c_str());
  return code;
}

}  // namespace

void AddDoctorCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<DoctorArgs>();
  auto* sub = app.add_subcommand("doctor", "Will the GPU wait for data? Bench vs training rate");
  sub->footer(
      "Consumption: given (--train-tokens-per-s, --train-samples-per-s), or from the model:\n"
      "  tokens/s = gpus x MFU x peak dense bf16 FLOP/s per GPU / (6 x params)\n"
      "(6N FLOPs per token for forward + backward; --gpus = the GPUs this machine's loader\n"
      "feeds). Then runs the bench and prints delivered / consumed: PASS at >= 1.2x, else FAIL,\n"
      "the slowest stage and advice. Exit code 0 PASS, 1 FAIL, 2 error.\n"
      "Example: stoker doctor data/web --seq-len 2048 --batch-size 8 --model-params 1.3B --gpus 8");
  AddLoaderFlags(sub, &args->loader);
  AddBenchRunFlags(sub, &args->bench);
  auto* tok = sub->add_option("--train-tokens-per-s", args->train_tokens_per_s,
                              "Tokens/s training consumes")
                  ->check(RealNumber(0, Bound::kExclusive));
  auto* smp = sub->add_option("--train-samples-per-s", args->train_samples_per_s,
                              "Samples (rows of --seq-len) per second training consumes")
                  ->check(RealNumber(0, Bound::kExclusive));
  auto* model = sub->add_option("--model-params", args->model_params,
                                "Model size: 1.3B, 350M, 7e9 (with --gpus)");
  tok->excludes(smp)->excludes(model);
  smp->excludes(model);
  sub->add_option("--gpus", args->gpus, "GPUs fed by this machine (with --model-params)")
      ->check(WholeNumber<int>(1))
      ->needs(model);
  std::string gpus_known;
  for (const diag::GpuSpec& g : diag::KnownGpus()) {
    gpus_known += (gpus_known.empty() ? "" : "|") + std::string(g.name);
  }
  sub->add_option("--gpu", args->gpu, "GPU type: " + gpus_known)->capture_default_str();
  sub->add_option("--mfu", args->mfu, "Model FLOPs utilization, (0, 1]")
      ->check(RealNumber(0, Bound::kExclusive, 1))
      ->capture_default_str();
  sub->add_flag("--json", args->json, "Print one JSON object with the verdict and the bench");
  sub->add_option("--report", args->report,
                  "Also write a self-contained HTML report (verdict, delivered / consumed over "
                  "time against the 1.2x line, advice) to FILE.html")
      ->transform(LocalFile());
  sub->callback([args, exit_code] {
    Status st = ExpandMixtureFlag(&args->loader);
    *exit_code = st.ok() ? RunDoctor(*args) : ReportError("doctor", st);
  });
}

}  // namespace stoker::cli
