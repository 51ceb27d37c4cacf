// `stoker bench`: the loader-only experiment. Iterates the real loader (or the synthetic one) with
// no training and prints what it delivered: rates, time to first batch, CPU, peak RSS and the time
// per stage, as a table, a JSON object and/or a self-contained HTML report.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "bench_calibrate.h"
#include "cli_common.h"
#include "commands.h"
#include "diag/bench_report.h"
#include "diag/report_html.h"
#include "loader_flags.h"
#include "number_flags.h"
#include "stream_flags.h"

namespace stoker::cli {
namespace {

struct BenchArgs {
  LoaderFlags loader;
  BenchFlags bench;
  bool json = false;
  std::string report;
  StreamFlags stream;     // --stream: the DATASET arguments are raw text read by the streaming path
  std::string calibrate;  // --calibrate TIMES: fit the cost model to measured times, run nothing
};

int RunBenchCommand(BenchArgs& a) {
  if (!a.calibrate.empty()) {
    if (!a.loader.datasets.empty() || a.bench.synthetic) {
      return ReportError("bench",
                         InvalidArgument("--calibrate fits a file of measured times and "
                                         "runs no loader: give no DATASET or --synthetic"));
    }
    return RunCalibrateCommand(a.calibrate, a.json);
  }
  if (Status st = CheckStreamFlagsUse(a.stream); !st.ok()) return ReportError("bench", st);
  if (!a.bench.synthetic && a.loader.datasets.empty()) {
    return ReportError("bench", InvalidArgument("give at least one DATASET (or --synthetic)"));
  }
  if (a.bench.synthetic && !a.loader.datasets.empty()) {
    return ReportError("bench",
                       InvalidArgument("--synthetic serves a fixed batch: give no DATASET"));
  }
  Result<LoaderOptions> options = ToLoaderOptions(a.loader);
  if (!options.ok()) return ReportError("bench", options.status());
  // What the pre-scan of the stream (the last one opened) read, for its line below.
  auto scan = std::make_shared<StreamScanSummary>();
  if (a.stream.stream) {
    Result<StreamOptions> so = ToStreamOptions(a.stream, a.loader.datasets);
    if (!so.ok()) return ReportError("bench", so.status());
    a.bench.open = [so = *so, scan](const LoaderOptions& o) {
      return OpenStreamLoader(so, o, nullptr, scan.get());
    };
  }
  a.bench.progress = true;
  Result<diag::BenchResult> r = RunBenchFromFlags(a.loader, *options, a.bench, "bench");
  if (!r.ok()) return ReportError("bench", r.status());
  if (scan->files > 0) {
    std::fprintf(stderr, "bench: stream pre-scan: %llu of %llu file(s) from scan files\n",
                 static_cast<unsigned long long>(scan->files_from_scan),
                 static_cast<unsigned long long>(scan->files));
  }
  const std::string title =
      std::string(a.bench.synthetic ? "--synthetic " : "") +
      (a.stream.stream
           ? "--stream --tokenizer " + a.stream.options.tokenizer + " --shuffle-buffer " +
                 std::to_string(a.stream.options.shuffle_buffer) + " "
           : std::string()) +
      DescribeLoaderFlags(a.loader, *options);
  if (!a.report.empty()) {
    Status st = diag::WriteReportHtml(*r, title, a.report);
    if (!st.ok()) return ReportError("bench", st);
  }
  if (a.json) {
    std::printf(
        "%s\n",
        diag::BenchJson(*r, *options, a.bench.synthetic, a.bench.consumer_step_ms).dump().c_str());
    return kExitOk;
  }
  std::printf("stoker bench: %s\n", title.c_str());
  std::printf("loader only, no training%s; %d workers, %d ring slots%s\n",
              a.bench.consumer_step_ms > 0 ? " (a simulated step per batch)" : "", r->workers,
              r->ring_slots, r->pinned ? ", pinned" : "");
  std::printf(
      "warm-up excluded: the first %llu batches are not measured (time to first batch is "
      "measured cold, from open)\n",
      static_cast<unsigned long long>(r->warmup_batches));
  std::printf("%s", diag::RenderBenchTable(*r).c_str());
  if (a.bench.consumer_step_ms > 0) {
    std::printf("stall monitor: %llu warning(s)\n",
                static_cast<unsigned long long>(r->monitor_warnings));
  }
  if (!a.report.empty()) std::printf("report written to %s\n", a.report.c_str());
  return kExitOk;
}

}  // namespace

void AddBenchCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<BenchArgs>();
  auto* sub = app.add_subcommand("bench", "Loader only: measure what the pipeline can deliver");
  sub->footer(
      "Runs the loader with no training after a warm-up (excluded from every figure) and prints\n"
      "samples/s, tokens/s, MB/s read, time to first batch, CPU time, peak RSS and the time per\n"
      "stage (read, tokenize where it applies, assemble, host->device copy; summed over threads).\n"
      "--synthetic serves one fixed batch (no data loading): the loader's ceiling.\n"
      "--consumer-step-ms X simulates a training step (warm-up included) and lets the loader's\n"
      "own stall monitor judge it: it warns when the loader cannot deliver 1.2x what the step\n"
      "consumes. Without a step the monitor is kept quiet (nothing is trained).\n"
      "--calibrate TIMES runs no loader: it fits cost(L) = a*L + b*L^2 + c to measured microbatch\n"
      "times (JSONL {\"lengths\": [...], \"seconds\": s}, as stoker.calibrate(save=) writes) and\n"
      "prints a, b, c, R^2 and the --model-config a,b,c value.\n"
      "Example: stoker bench data/web --seq-len 2048 --batch-size 32 --seconds 20 --report r.html");
  AddLoaderFlags(sub, &args->loader);
  AddBenchRunFlags(sub, &args->bench);
  sub->add_flag("--synthetic", args->bench.synthetic, "Serve one fixed batch (no data loading)");
  AddStreamFlags(sub, &args->stream);
  sub->add_flag("--json", args->json, "Print one JSON object instead of the table");
  sub->add_option("--calibrate", args->calibrate,
                  "Fit the cost model to a JSONL file of measured microbatch times; run no loader")
      ->check(CLI::ExistingFile);
  sub->add_option("--report", args->report, "Write a self-contained HTML report to FILE.html")
      ->transform(LocalFile());
  sub->callback([args, exit_code] {
    Status st = args->stream.stream && !args->loader.mixture.empty()
                    ? InvalidArgument("--mixture plans indexed datasets, not --stream")
                    : ExpandMixtureFlag(&args->loader, PlanFlagsUse::kLoader);
    *exit_code = st.ok() ? RunBenchCommand(*args) : ReportError("bench", st);
  });
}

}  // namespace stoker::cli
