#include "cmd_scan.h"

#include <cstdio>
#include <memory>

#include "cli_common.h"
#include "commands.h"
#include "common/human_size.h"
#include "common/progress.h"
#include "stoker/error_policy.h"
#include "stoker/tokenizer.h"
#include "stream/prescan.h"
#include "text/utf8.h"

namespace stoker::cli {

void AddScanFlags(CLI::App* sub, ScanArgs* a) {
  AddStreamTextFlags(sub, a);
  sub->add_flag("--beside", a->beside,
                "Write .<file>.stoker-scan beside each input file (hidden) instead of into the "
                "scan cache");
}

int RunScan(const ScanArgs& a, const char* command) {
  auto ctx = std::make_shared<stream::StreamContext>();
  Result<std::unique_ptr<Tokenizer>> tok =
      OpenTokenizer(a.options.tokenizer, a.options.tokenizer_options);
  if (!tok.ok()) return ReportError(command, tok.status());
  ctx->tokenizer = std::move(*tok);
  // The reader's options exactly as StreamPlanner::Create sets them: the scan's identity.
  stream::ReaderOptions& r = ctx->config.reader;
  r.encoder.text_field = a.options.text_field;
  r.encoder.utf8 = a.options.utf8;
  Result<ErrorPolicy> on_error = ParseErrorPolicy(a.on_error);
  if (!on_error.ok()) return ReportError(command, on_error.status());
  r.encoder.skip_bad_lines = r.skip_corrupt_shards = *on_error == ErrorPolicy::kSkip;
  r.encoder.skip_hint = stream::kStreamSkipHint;
  Result<std::shared_ptr<const ChatEncoder>> chat = StreamChatFromFlags(a, a.inputs);
  if (!chat.ok()) return ReportError(command, chat.status());
  r.chat = std::move(*chat);
  Result<std::vector<stream::StreamShard>> shards = stream::MakeShards(a.inputs, 1);
  if (!shards.ok()) return ReportError(command, shards.status());
  ctx->shards = std::move(*shards);
  stream::PrescanOptions po;
  po.write = true;
  po.write_beside = a.beside;
  const std::string dir = ScanCacheDir(a);
  po.cache_dir = dir == "auto" ? stream::DefaultScanCacheDir() : dir;
  stream::PrescanSummary sum;
  Result<std::vector<std::vector<uint32_t>>> lengths = stream::PrescanShards(*ctx, po, &sum);
  if (!lengths.ok()) return ReportError(command, lengths.status());
  std::printf(
      "%s: scanned %llu file(s): %s documents, %s tokens, %s of text; wrote %zu "
      "scan file(s)%s%s\n",
      command, static_cast<unsigned long long>(sum.files), FormatCount(sum.documents).c_str(),
      FormatCount(sum.tokens).c_str(), FormatSize(sum.bytes).c_str(), sum.written.size(),
      a.beside ? " beside the data" : " in ", a.beside ? "" : po.cache_dir.c_str());
  return kExitOk;
}

void AddScanCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ScanArgs>();
  auto* sub = app.add_subcommand(
      "scan",
      "Pre-scan streamed inputs (document offsets, tokens, bytes) for stoker.Stream and "
      "bench --stream");
  sub->footer(
      "A stream counts its steps per epoch from every document's length. `stoker scan` writes\n"
      "each input file's lengths once, keyed by the file's size and modification time, the\n"
      "tokenizer and the reader's flags, into the scan cache (or beside the data with --beside),\n"
      "so that a stream opened with the same flags finds them and reads no data to start\n"
      "(docs/streaming.md, \"Cached pre-scan\"). Give it the flags the stream will use.\n"
      "Example: stoker scan corpus/*.jsonl.zst --tokenizer gpt2/tokenizer.json");
  sub->add_option("inputs", args->inputs,
                  "JSONL (.gz, .zst), text files, directories, record shards")
      ->required();
  AddScanFlags(sub, args.get());
  sub->callback([args, exit_code] { *exit_code = RunScan(*args, "scan"); });
}

}  // namespace stoker::cli
