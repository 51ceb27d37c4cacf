#include "ingest/pack_run.h"

#include <memory>
#include <utility>
#include <vector>

#include "common/human_size.h"
#include "common/uri.h"
#include "ingest/chat_inputs.h"
#include "ingest/pack_task.h"
#include "ingest/upload_dataset.h"
#include "text/tokenizer.h"

namespace stoker {

Result<PackFormat> ParsePackFormat(std::string_view name) {
  if (name == "stoker") return PackFormat::kStoker;
  if (name == "webdataset" || name == "wds") return PackFormat::kWebDataset;
  if (name == "tfrecord") return PackFormat::kTfRecord;
  return InvalidArgument("pack format must be stoker, webdataset or tfrecord, not '" +
                         std::string(name) + "'");
}

Result<PackRunResult> RunPackArgs(const PackArgs& args,
                                  std::function<void(const PackProgress&)> on_progress) {
  PackRunResult run;
  STOKER_ASSIGN_OR_RETURN(run.format, ParsePackFormat(args.format));
  // One task of several: writes its shards and its receipt into the job's output.
  STOKER_ASSIGN_OR_RETURN(bool task_split, IsTaskSplit(args));
  if (task_split) return RunPackTask(args, std::move(on_progress));
  if (run.format == PackFormat::kWebDataset) {
    // -o s3://...: packed into a local staging directory, then uploaded (records.json last).
    STOKER_ASSIGN_OR_RETURN(
        PackDestination destination,
        PreparePackDestination(args.output, args.overwrite, kRecordsManifestName));
    std::vector<std::string> inputs;
    for (const std::string& input : args.inputs) {
      STOKER_ASSIGN_OR_RETURN(std::string local, LocalPathFromUri(input));
      inputs.push_back(std::move(local));
    }
    STOKER_ASSIGN_OR_RETURN(uint64_t shard_size, ParseSize(args.shard_size));
    STOKER_ASSIGN_OR_RETURN(run.records, PackWebDataset(inputs, destination.local_dir, shard_size,
                                                        args.overwrite || destination.remote()));
    STOKER_RETURN_IF_ERROR(FinishRecordsDestination(destination, ""));
    run.output = destination.remote() ? destination.uri : destination.local_dir;
    run.records->output_dir = run.output;
    return run;
  }
  PackDestination destination;
  STOKER_ASSIGN_OR_RETURN(run.options, PackOptionsFromArgs(args, &destination));
  run.options.on_progress = std::move(on_progress);
  TokenizerOptions tokenizer_options = args.tokenizer_options;
  tokenizer_options.load_threads = run.options.threads;  // the tables are built on pack's threads
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<Tokenizer> tokenizer,
                          OpenPackTokenizer(args, run.options, tokenizer_options));
  STOKER_ASSIGN_OR_RETURN(run.pack, Pack(run.options, *tokenizer));
  if (run.format == PackFormat::kTfRecord) {
    STOKER_ASSIGN_OR_RETURN(run.records, ExportTfRecord(run.options.output_dir, run.pack->manifest,
                                                        run.options.shard_size_bytes));
    // Remote: the TFRecord files go up before the dataset, whose manifest is the last object.
    STOKER_RETURN_IF_ERROR(FinishRecordsDestination(destination, "tfrecord"));
    if (destination.remote()) run.records->output_dir = JoinUri(destination.uri, "tfrecord");
  }
  STOKER_RETURN_IF_ERROR(FinishPackDestination(destination));
  run.output = destination.remote() ? destination.uri : run.options.output_dir;
  return run;
}

}  // namespace stoker
