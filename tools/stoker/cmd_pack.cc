// `stoker pack`: raw text (JSONL, .gz/.zst, text files, directories) -> a stoker dataset.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "common/human_size.h"
#include "common/progress.h"
#include "flag_alias.h"
#include "ingest/input_plan.h"
#include "ingest/pack.h"
#include "ingest/pack_args.h"
#include "ingest/pack_records.h"
#include "ingest/pack_run.h"
#include "ingest/pack_task.h"
#include "number_flags.h"
#include "option_flags.h"
#include "stoker/tokenizer.h"
#include "tokenizer_flags.h"

namespace stoker::cli {
namespace {

struct PackCliArgs {
  PackArgs pack;
  std::string progress = "auto";
  bool list = false;
};

// --list: records the plan (OUTPUT/inputs.json, unless it is there) and prints each task's inputs.
int ListTasks(const PackArgs& given) {
  PackArgs args = given;
  if (!args.task_count) {
    // Not even from the environment (a Slurm array, torchrun): one task would be planned.
    Result<TaskAssignment> env = TaskFromEnvironment();
    if (!env.ok()) return ReportError("pack", env.status());
    if (env->source == "default") {
      return ReportError("pack", InvalidArgument("--list shows how the job's tasks split the "
                                                 "inputs: give --task-count N, the number of "
                                                 "tasks it will run"));
    }
  }
  if (args.task_count && !args.task_index) args.task_index = 0;  // any task plans the job
  Result<TaskPlan> plan = PlanPackTasks(args);
  if (!plan.ok()) return ReportError("pack", plan.status());
  std::printf("pack: plan %s/%s: %zu input file(s), %s, %u task(s)\n", args.output.c_str(),
              kTaskPlanFileName, plan->files.size(), FormatSize(plan->total_bytes()).c_str(),
              plan->task_count);
  for (uint32_t t = 0; t < plan->task_count; ++t) {
    TaskSlice slice = plan->Slice(t);
    uint64_t bytes = 0;
    for (size_t i = slice.first; i < slice.last; ++i) bytes += plan->files[i].size_bytes;
    std::printf("task %u: %zu file(s), %llu bytes (%s)\n", t, slice.last - slice.first,
                static_cast<unsigned long long>(bytes), FormatSize(bytes).c_str());
    for (size_t i = slice.first; i < slice.last; ++i) {
      std::printf("  %s %llu\n", plan->files[i].key.c_str(),
                  static_cast<unsigned long long>(plan->files[i].size_bytes));
    }
  }
  return kExitOk;
}

ProgressReporter::Mode ProgressMode(const std::string& s) {
  if (s == "bar") return ProgressReporter::Mode::kTerminal;
  if (s == "plain") return ProgressReporter::Mode::kPlain;
  if (s == "off") return ProgressReporter::Mode::kSilent;
  return ProgressReporter::Mode::kAuto;
}

int PrintWebDataset(const RecordPackResult& r) {
  std::printf(
      "pack: %llu file(s) -> %llu sample(s) in %llu WebDataset shard(s), %s, in %s "
      "(%llu file(s) without an extension skipped)\n",
      static_cast<unsigned long long>(r.files_read), static_cast<unsigned long long>(r.records),
      static_cast<unsigned long long>(r.output_files), FormatSize(r.output_bytes).c_str(),
      r.output_dir.c_str(), static_cast<unsigned long long>(r.files_skipped));
  return kExitOk;
}

int RunPack(const PackCliArgs& cli) {
  if (cli.list) return ListTasks(cli.pack);
  std::unique_ptr<ProgressReporter> reporter;
  uint64_t last_docs = 0, last_bytes = 0;
  auto on_progress = [&](const PackProgress& p) {
    if (!reporter) {
      ProgressReporter::Options ro;
      ro.label = "pack";
      ro.item_name = "documents";
      ro.total_bytes = p.disk_bytes_total;
      ro.mode = ProgressMode(cli.progress);
      reporter = std::make_unique<ProgressReporter>(ro);
    }
    reporter->Add(p.documents - last_docs, p.disk_bytes_done - last_bytes);
    last_docs = p.documents;
    last_bytes = p.disk_bytes_done;
  };
  Result<PackRunResult> run = RunPackArgs(cli.pack, on_progress);
  // On failure the error line is the one message; only a drawn bar needs closing first.
  if (reporter && (run.ok() || reporter->mode() == ProgressReporter::Mode::kTerminal)) {
    reporter->Finish(run.ok());
  }
  if (!run.ok()) return ReportError("pack", run.status());
  if (run->skipped) {
    std::printf("pack: task %u of %u: finished before (%s matches), nothing to do\n",
                run->options.task_index, run->options.task_count, run->receipt.c_str());
    return kExitOk;
  }
  if (run->format == PackFormat::kWebDataset) return PrintWebDataset(*run->records);
  const PackOptions* options = &run->options;
  const PackResult* result = &*run->pack;
  if (run->format == PackFormat::kTfRecord) {
    const RecordPackResult& tf = *run->records;
    std::printf(
        "pack: %llu document(s) also written as tf.train.Example in %llu TFRecord "
        "file(s), %s, in %s\n",
        static_cast<unsigned long long>(tf.records),
        static_cast<unsigned long long>(tf.output_files), FormatSize(tf.output_bytes).c_str(),
        tf.output_dir.c_str());
  }

  const Manifest& m = result->manifest;
  const PackCounters& c = result->counters;
  std::printf("pack: task %u of %u done: %llu of %llu input file(s) -> %s\n", options->task_index,
              options->task_count, static_cast<unsigned long long>(result->input_files),
              static_cast<unsigned long long>(result->total_files), run->output.c_str());
  // The progress line above counts the input's size on disk; this one what was read from it
  // (decompressed), and says which.
  const std::string on_disk = last_bytes > 0 && last_bytes != c.input_bytes
                                  ? " (" + FormatSize(last_bytes) + " on disk)"
                                  : "";
  std::printf(
      "pack: %s documents, %s tokens (%s, %s), %zu shard(s), %s of text read%s in %s (%s, %d "
      "thread%s)\n",
      FormatCount(m.total_documents()).c_str(), FormatCount(m.total_tokens()).c_str(),
      std::string(TokenDTypeName(m.dtype)).c_str(), m.tokenizer.kind.c_str(), m.shards.size(),
      FormatSize(c.input_bytes).c_str(), on_disk.c_str(), FormatDuration(result->elapsed_s).c_str(),
      FormatRate(result->elapsed_s > 0 ? c.input_bytes / result->elapsed_s : 0).c_str(),
      options->threads, options->threads == 1 ? "" : "s");
  if (c.invalid_utf8_replaced_documents || c.invalid_utf8_skipped_documents ||
      c.bad_lines_skipped || c.empty_documents_skipped) {
    std::printf(
        "pack: invalid UTF-8: %llu document(s) repaired (%llu replacements), %llu skipped; "
        "bad lines skipped: %llu; empty documents skipped: %llu\n",
        static_cast<unsigned long long>(c.invalid_utf8_replaced_documents),
        static_cast<unsigned long long>(c.invalid_utf8_replacements),
        static_cast<unsigned long long>(c.invalid_utf8_skipped_documents),
        static_cast<unsigned long long>(c.bad_lines_skipped),
        static_cast<unsigned long long>(c.empty_documents_skipped));
  }
  for (const auto& [why, r] : c.skip_reasons) {
    std::printf("pack: skipped %llu: %s (first at %s)\n", static_cast<unsigned long long>(r.count),
                why.c_str(), r.first.c_str());
  }
  if (m.loss_mask) {
    const double share = m.total_tokens() > 0 ? 100.0 * m.loss_mask->trained_tokens /
                                                    static_cast<double>(m.total_tokens())
                                              : 0.0;
    std::printf(
        "pack: chat data: %s trained tokens (%.1f%%), loss mask in %s/; conversations with "
        "nothing to train dropped: %llu\n",
        FormatCount(m.loss_mask->trained_tokens).c_str(), share, m.loss_mask->dataset.c_str(),
        static_cast<unsigned long long>(c.untrained_conversations_skipped));
  }
  if (c.corrupt_shards_skipped) {
    std::printf(
        "pack: %llu corrupt record shard(s) cut short at the corruption (--on-error skip)\n",
        static_cast<unsigned long long>(c.corrupt_shards_skipped));
  }
  return kExitOk;
}

}  // namespace

void AddPackCommand(CLI::App& app, int* exit_code) {
  auto cli = std::make_shared<PackCliArgs>();
  PackArgs* args = &cli->pack;
  auto* sub =
      app.add_subcommand("pack", "Tokenize raw text into a stoker dataset (Megatron shards)");
  sub->footer(
      "Inputs: JSONL files (*.jsonl, *.ndjson; one document per line, text in --text-field),\n"
      "optionally compressed (.gz, .zst); any other file is one document (decompressed if .gz or\n"
      ".zst); directories are walked recursively in sorted path order, each file classified the\n"
      "same way, record shards by their names (hidden names are skipped). Documents keep that "
      "order whatever --num-workers is.\n"
      "EOS is appended to every document; empty documents are skipped. Tokens are uint16 when\n"
      "the vocabulary has fewer than 65,500 entries, else int32. The manifest is written last:\n"
      "DATASET is complete exactly when DATASET/manifest.json exists.\n"
      "Many machines: with --task-count N > 1 (or SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT, "
      "else\n"
      "RANK/WORLD_SIZE) every task writes into the same DATASET: the input list is taken once\n"
      "(DATASET/inputs.json; --list writes it and prints each task's byte-balanced slice), each\n"
      "task writes its shards then its receipt (DATASET/tasks/NNNNN.json); a task whose receipt\n"
      "matches does nothing. Then `stoker merge DATASET` checks the receipts, writes the "
      "manifest.\n"
      "Record shards (docs/formats.md): *.tar[.gz|.zst] (WebDataset), *.tfrecord[.gz] (TFRecord\n"
      "of tf.train.Example), a directory with index.json (MosaicML MDS or LitData), *.parquet\n"
      "(one shard per row group), *.arrow or a Dataset.save_to_disk directory; one document per\n"
      "record, from --text-field (text is tokenized, token ids are copied, EOS appended).\n"
      "Record shards may be s3:// (globs are listed) or http(s):// (names, brace lists, "
      "index.json)\n"
      "and are read in place; -o s3://bucket/prefix uploads the output (every --format).\n"
      "Chat data: JSONL records with `messages` (OpenAI), `conversations` (ShareGPT) or `prompt` "
      "+\n"
      "`completion` are packed as conversations when --tokenizer is a model directory with a chat\n"
      "template (or with --train-on / --chat-template): rendered by the model's own template, "
      "with\n"
      "a loss mask written beside the tokens (DATASET/loss_mask/); no EOS is appended "
      "(docs/chat.md).\n"
      "Example: stoker pack data/sample/corpus.jsonl -o out/sample --tokenizer "
      "data/sample/sample.model");
  sub->add_option("inputs", args->inputs,
                  "JSONL / text files and directories; WebDataset tars (brace lists like "
                  "shard-{000000..000009}.tar), TFRecord files, MDS directories")
      ->required();
  sub->add_option("-o,--output", args->output, "Dataset directory to write")->required();
  AddBpeTokenizerFlags(sub, &args->tokenizer_options);
  AddChatFlags(sub, &args->train_on, &args->chat_template, &args->chat_field, "Chat data");
  for (const OptionRow<PackArgs>& row : PackArgsTable()) {  // the rest of PackArgs' flags
    if (!row.cli.empty() && sub->get_option_no_throw(std::string(row.cli)) == nullptr) {
      AddOptionFlag(sub, row, args);
    }
  }
  AddDeprecatedAlias(sub, "--threads", sub->get_option("--num-workers"), &args->num_workers,
                     WholeNumber<int>(0));
  sub->add_option("--task-index", args->task_index, "This task's index, 0-based")
      ->check(WholeNumber<uint32_t>());
  sub->add_option("--task-count", args->task_count, "Number of tasks in the job")
      ->check(WholeNumber<uint32_t>(1));
  AddDeprecatedAlias(sub, "--bad-lines", sub->get_option("--on-error"), &args->on_error,
                     CLI::IsMember({"fail", "skip"}));
  sub->add_option("--progress", cli->progress, "auto (bar on a terminal), bar, plain or off")
      ->check(CLI::IsMember({"auto", "bar", "plain", "off"}))
      ->capture_default_str();
  sub->add_flag("--list", cli->list,
                "With --task-count N: record the input plan (DATASET/inputs.json) and print each "
                "task's inputs and bytes; packs nothing");
  sub->callback([cli, exit_code] { *exit_code = RunPack(*cli); });
}

}  // namespace stoker::cli
