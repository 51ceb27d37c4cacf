// `stoker merge`: joins the manifests of several datasets (e.g. task parts) without copying shards.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "common/progress.h"
#include "ingest/merge.h"
#include "ingest/remote_tools.h"
#include "ingest/task_merge.h"

namespace stoker::cli {
namespace {

struct MergeArgs {
  std::vector<std::string> parts;
  std::string output;
  bool overwrite = false;
};

// `stoker merge OUTPUT` of a task-split pack: checks every task's receipt, writes the manifest.
int RunMergeTasks(const std::string& output) {
  Result<Manifest> merged = MergeTasks(output);
  if (!merged.ok()) return ReportError("merge", merged.status());
  if (merged->shards.empty() && merged->counters.count("files_read")) {  // --format webdataset
    std::printf(
        "merge: %llu task(s) -> %s: %s samples from %s files (records.json; no data "
        "copied)\n",
        static_cast<unsigned long long>(merged->counters.at("merged_parts")), output.c_str(),
        FormatCount(merged->counters.at("records")).c_str(),
        FormatCount(merged->counters.at("files_read")).c_str());
    return kExitOk;
  }
  std::printf("merge: %llu task(s) -> %s: %s documents, %s tokens, %zu shard(s) (no data copied)\n",
              static_cast<unsigned long long>(merged->counters.at("merged_parts")), output.c_str(),
              FormatCount(merged->total_documents()).c_str(),
              FormatCount(merged->total_tokens()).c_str(), merged->shards.size());
  return kExitOk;
}

int RunMerge(const MergeArgs& args) {
  if (args.parts.size() == 1 && (args.output.empty() || args.output == args.parts[0])) {
    Result<bool> split = IsTaskSplitOutput(args.parts[0]);
    if (!split.ok()) return ReportError("merge", split.status());
    if (*split) return RunMergeTasks(args.parts[0]);
  }
  if (args.output.empty()) {
    return ReportError("merge", InvalidArgument("--output is required unless the one argument is "
                                                "the output of a task-split pack (it holds "
                                                "inputs.json)"));
  }
  MergeOptions options{args.parts, args.output, args.overwrite};
  Result<Manifest> merged = IsRemoteMerge(options) ? MergeRemote(options) : Merge(options);
  if (!merged.ok()) return ReportError("merge", merged.status());
  std::printf("merge: %zu part(s) -> %s: %s documents, %s tokens, %zu shard(s) (no data copied)\n",
              args.parts.size(), args.output.c_str(),
              FormatCount(merged->total_documents()).c_str(),
              FormatCount(merged->total_tokens()).c_str(), merged->shards.size());
  return kExitOk;
}

}  // namespace

void AddMergeCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<MergeArgs>();
  auto* sub = app.add_subcommand("merge",
                                 "Finish a task-split pack, or join datasets into one, "
                                 "without copying shards");
  sub->footer(
      "stoker merge OUTPUT (one argument, no -o): OUTPUT is where the tasks of `stoker pack\n"
      "--task-index I --task-count N -o OUTPUT` wrote. Checks the plan (inputs.json) and every\n"
      "task's receipt (tasks/NNNNN.json: inputs, options, shards), names any task missing or\n"
      "mismatched, and writes OUTPUT/manifest.json over the tasks' shards (local or s3://).\n"
      "stoker merge PART... -o DATASET: the merged manifest refers to the parts' shards by "
      "relative paths, so keep the parts where\n"
      "they are (moving the parts and the merged directory together is fine). Parts written by\n"
      "`stoker pack --task-index/--task-count` are put in task order and must be complete (every\n"
      "task exactly once); other datasets are merged in the order given. Tokenizer and dtype must\n"
      "agree.\nParts and output may be s3:// prefixes in one bucket: the parts' manifests and .idx "
      "files\n"
      "are read, the shards are listed (not read), and the merged manifest and length index are\n"
      "uploaded.\nExample: stoker merge out/part-* -o out/all");
  sub->add_option("parts", args->parts,
                  "The output of a task-split pack, or dataset directories to join")
      ->required();
  sub->add_option("-o,--output", args->output,
                  "Directory for the merged manifest (not for a task-split output)");
  sub->add_flag("--overwrite", args->overwrite, "Replace a dataset already in the output");
  sub->callback([args, exit_code] { *exit_code = RunMerge(*args); });
}

}  // namespace stoker::cli
