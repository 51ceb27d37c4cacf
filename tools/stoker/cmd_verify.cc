// `stoker verify`: recompute checksums and check every index against its data.
#include <cstdio>
#include <string>

#include "cli_common.h"
#include "commands.h"
#include "common/human_size.h"
#include "common/progress.h"
#include "format/verify.h"

namespace stoker::cli {
namespace {

struct VerifyArgs {
  std::string path;
  std::string progress = "auto";
};

int RunVerify(const VerifyArgs& args) {
  ProgressReporter::Options po;
  po.label = "verify";
  po.item_name = "documents";
  if (args.progress == "bar") po.mode = ProgressReporter::Mode::kTerminal;
  if (args.progress == "plain") po.mode = ProgressReporter::Mode::kPlain;
  if (args.progress == "off") po.mode = ProgressReporter::Mode::kSilent;
  ProgressReporter progress(po);
  Result<VerifyReport> report = Verify(args.path, &progress);
  progress.Finish(report.ok());
  if (!report.ok()) return ReportError("verify", report.status());
  for (const std::string& p : report->problems) {
    std::fprintf(stderr, "stoker verify: problem: %s\n", p.c_str());
  }
  std::printf("verify: %s: %s (%s): %s documents, %s tokens, %llu file(s), %s read: %s\n",
              report->ok() ? "ok" : "FAILED", report->path.c_str(),
              report->format.empty() ? "unknown format" : report->format.c_str(),
              FormatCount(report->documents).c_str(), FormatCount(report->tokens).c_str(),
              static_cast<unsigned long long>(report->files), FormatSize(report->bytes).c_str(),
              report->ok()
                  ? "no problems found"
                  : (std::to_string(report->problems.size()) + " problem(s) found").c_str());
  return report->ok() ? kExitOk : kExitCheckFailed;
}

}  // namespace

void AddVerifyCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<VerifyArgs>();
  auto* sub = app.add_subcommand(
      "verify",
      "Check token data end to end: recompute the XXH3 checksums of a stoker dataset, compare "
      "counts, sizes and dtype with its manifest, validate every index entry against its data, "
      "and read every token.");
  sub->footer(
      "DATASET may be a stoker dataset directory, a Megatron prefix P (P.bin + P.idx) or either of "
      "its files, a .npy file, or a nanoGPT / llm.c .bin.\n"
      "Exit status: 0 no problems, 1 problems found (one line each on stderr, naming the file and "
      "byte offset), 2 error (e.g. DATASET does not exist or has an unknown format).");
  sub->add_option("DATASET", args->path, "dataset directory or token file")->required();
  sub->add_option("--progress", args->progress,
                  "auto (a bar on a terminal, plain lines otherwise), bar, plain or off")
      ->check(CLI::IsMember({"auto", "bar", "plain", "off"}));
  sub->callback([args, exit_code] { *exit_code = RunVerify(*args); });
}

}  // namespace stoker::cli
