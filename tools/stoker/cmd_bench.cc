// `stoker bench`: the loader-only experiment. Iterates the real loader (or the synthetic one) with
// no training and prints what it delivered: rates, time to first batch, CPU, peak RSS and the time
// per stage, as a table, a JSON object and/or a self-contained HTML report.
#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "diag/bench_report.h"
#include "diag/report_html.h"
#include "stoker/cli_common.h"
#include "stoker/commands.h"
#include "stoker/loader_flags.h"
#include "stoker/number_flags.h"
#include "stream/stream_planner.h"
#include "stoker/tokenizer_flags.h"

namespace stoker::cli {
namespace {

struct BenchArgs {
  LoaderFlags loader;
  BenchFlags bench;
  bool json = false;
  std::string report;
  // --stream: the DATASET arguments are raw text inputs read by the streaming path.
  bool stream = false;
  std::string tokenizer = "bytes";
  TokenizerOptions tokenizer_options;  // --pattern, --special, --eos ... (BPE)
  std::string text_field = "text";
  uint64_t shuffle_buffer = 10000;
  uint64_t steps_per_epoch = 0;
};

int RunBenchCommand(BenchArgs& a) {
  if (!a.bench.synthetic && a.loader.datasets.empty()) {
    return ReportError("bench", InvalidArgument("give at least one DATASET (or --synthetic)"));
  }
  if (a.bench.synthetic && !a.loader.datasets.empty()) {
    return ReportError("bench", InvalidArgument("--synthetic serves a fixed batch: give no DATASET"));
  }
  Result<LoaderOptions> options = ToLoaderOptions(a.loader);
  if (!options.ok()) return ReportError("bench", options.status());
  if (a.stream) {
    stream::StreamOptions so;
    so.inputs = a.loader.datasets;
    so.tokenizer = a.tokenizer;
    so.tokenizer_options = a.tokenizer_options;
    so.text_field = a.text_field;
    so.shuffle_buffer = a.shuffle_buffer;
    so.steps_per_epoch = a.steps_per_epoch;
    a.bench.open = [so](const LoaderOptions& o) { return stream::OpenStreamLoader(so, o); };
  }
  a.bench.progress = true;
  Result<diag::BenchResult> r = RunBenchFromFlags(a.loader, *options, a.bench, "bench");
  if (!r.ok()) return ReportError("bench", r.status());
  const std::string title = std::string(a.bench.synthetic ? "--synthetic " : "") +
                            (a.stream ? "--stream --tokenizer " + a.tokenizer +
                                            " --shuffle-buffer " + std::to_string(a.shuffle_buffer) + " "
                                      : std::string()) +
                            DescribeLoaderFlags(a.loader, *options);
  if (!a.report.empty()) {
    Status st = diag::WriteReportHtml(*r, title, a.report);
    if (!st.ok()) return ReportError("bench", st);
  }
  if (a.json) {
    std::printf("%s\n",
                diag::BenchJson(*r, *options, a.bench.synthetic, a.bench.consumer_step_ms)
                    .dump()
                    .c_str());
    return kExitOk;
  }
  std::printf("stoker bench: %s\n", title.c_str());
  std::printf("loader only, no training%s; %d workers, %d ring slots%s\n",
              a.bench.consumer_step_ms > 0 ? " (a simulated step per batch)" : "", r->workers,
              r->ring_slots, r->pinned ? ", pinned" : "");
  std::printf("warm-up excluded: the first %llu batches are not measured (time to first batch is "
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
      "Example: stoker bench data/web --seq-len 2048 --batch-size 32 --seconds 20 --report r.html");
  AddLoaderFlags(sub, &args->loader, /*datasets_optional=*/true);
  AddBenchRunFlags(sub, &args->bench);
  sub->add_flag("--synthetic", args->bench.synthetic, "Serve one fixed batch (no data loading)");
  sub->add_flag("--stream", args->stream,
                "Read the DATASET arguments as raw text (JSONL, .gz, .zst, text files) through "
                "the streaming path: shuffle buffer, online tokenization (docs/streaming.md)");
  sub->add_option("--tokenizer", args->tokenizer, "--stream: the tokenizer (as for pack)")
      ->capture_default_str();
  AddBpeTokenizerFlags(sub, &args->tokenizer_options);
  sub->add_option("--text-field", args->text_field,
                  "--stream: the JSONL field, or the record shards' field, holding the text")
      ->capture_default_str();
  sub->add_option("--shuffle-buffer", args->shuffle_buffer, "--stream: documents buffered")
      ->check(WholeNumber<uint64_t>(1))
      ->capture_default_str();
  sub->add_option("--steps-per-epoch", args->steps_per_epoch,
                  "--stream: fix the epoch length (0 = pre-scan the input once)")
      ->check(WholeNumber<uint64_t>(0))
      ->capture_default_str();
  sub->add_flag("--json", args->json, "Print one JSON object instead of the table");
  sub->add_option("--report", args->report, "Write a self-contained HTML report to FILE.html")
      ->transform(LocalFile());
  sub->callback([args, exit_code] { *exit_code = RunBenchCommand(*args); });
}

}  // namespace stoker::cli
