// `stoker pack` and `stoker.pack()` from their arguments, for each output format: stoker (token
// shards), tfrecord (token shards, plus DATASET/tfrecord/part-NNNNNN.tfrecord holding each
// document's token ids as a tf.train.Example) and webdataset (the input files themselves, grouped
// by key into tar shards; no tokenization). The CLI and the Python binding both call RunPackArgs,
// so the two cannot drift apart. Plain functions; thread-safe.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "ingest/pack.h"
#include "ingest/pack_args.h"
#include "ingest/pack_records.h"
#include "stoker/status.h"

namespace stoker {

enum class PackFormat { kStoker, kWebDataset, kTfRecord };

// "stoker", "webdataset" (or "wds"), "tfrecord"; kInvalidArgument naming the choices otherwise.
Result<PackFormat> ParsePackFormat(std::string_view name);

struct PackRunResult {
  PackFormat format = PackFormat::kStoker;
  std::optional<PackResult> pack;           // stoker and tfrecord: the token shards
  std::optional<RecordPackResult> records;  // webdataset and tfrecord: the record files
  PackOptions options;                      // what the token pack ran with (stoker, tfrecord)
  std::string output;  // where the dataset is: the -o URI for a remote output, else the directory
  // A task of a task-split pack (ingest/pack_task.h): its receipt, and whether a matching
  // receipt was already there (then nothing was packed; `pack` holds the receipt's manifest).
  std::string receipt;
  bool skipped = false;
};

// Runs the pack that `args` describes (args.format picks the output). `on_progress` (may be
// empty) is PackOptions::on_progress for the token pack. An s3:// output is packed into a local
// staging directory and uploaded, the manifest (records.json for webdataset) last. Errors as
// Pack, PackWebDataset and the upload; http(s):// outputs are kInvalidArgument (read-only).
Result<PackRunResult> RunPackArgs(const PackArgs& args,
                                  std::function<void(const PackProgress&)> on_progress = {});

}  // namespace stoker
