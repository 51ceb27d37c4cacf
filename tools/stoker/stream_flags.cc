#include "stream_flags.h"

#include "cli_common.h"
#include "number_flags.h"
#include "option_flags.h"
#include "stream/stream_chat.h"
#include "stream/stream_options_table.h"
#include "tokenizer_flags.h"

namespace stoker::cli {

namespace {

// The rows that shape a stream's batches rather than its text: a scan has no use for them, so
// AddStreamFlags adds them; every other row is a text flag.
bool IsStreamBatchRow(std::string_view name) {
  return name == "shuffle_buffer" || name == "steps_per_epoch" || name == "split_factor";
}

// The rows of StreamOptionTable() with a CLI spelling that `sub` has no flag for yet, batch rows
// or text rows (stream/stream_options_table.h).
void AddStreamRows(CLI::App* sub, StreamOptions* options, bool batch_rows) {
  for (const OptionRow<StreamOptions>& row : stream::StreamOptionTable()) {
    if (row.cli.empty() || IsStreamBatchRow(row.name) != batch_rows ||
        sub->get_option_no_throw(std::string(row.cli)) != nullptr) {
      continue;
    }
    AddOptionFlag(sub, row, options);
  }
}

}  // namespace

void AddStreamTextFlags(CLI::App* sub, StreamTextFlags* f) {
  StreamOptions& o = f->options;
  AddChatFlags(sub, &o.train_on, &o.chat_template, &o.chat_field, "Streams of chat records");
  AddStreamRows(sub, &o, false);
  AddBpeTokenizerFlags(sub, &o.tokenizer_options);
  if (sub->get_option_no_throw("--on-error") == nullptr) {
    sub->add_option("--on-error", f->on_error, "Streams: bad records: fail or skip")
        ->check(CLI::IsMember({"fail", "skip"}))
        ->capture_default_str();
  }
  CLI::Option* dir = sub->get_option("--scan-cache");
  dir->transform(LocalFile());
  sub->add_flag("--no-scan-cache", f->no_scan_cache,
                "Streams: no scan cache (scans beside the data are still read)")
      ->excludes(dir);
}

void AddStreamFlags(CLI::App* sub, StreamFlags* f) {
  sub->add_flag("--stream", f->stream,
                "Read the DATASET arguments as raw text (JSONL, .gz, .zst, text files, record "
                "shards) through the streaming path: shuffle buffer, online tokenization "
                "(docs/streaming.md)");
  const size_t before = sub->get_options().size();
  AddStreamTextFlags(sub, f);
  AddStreamRows(sub, &f->options, true);
  for (size_t i = before; i < sub->get_options().size(); ++i) {
    f->stream_only.push_back(sub->get_options()[i]);
  }
}

Status CheckStreamFlagsUse(const StreamFlags& f) {
  if (f.stream) return Status::OK();
  for (const CLI::Option* opt : f.stream_only) {
    if (opt->count() > 0) {
      return InvalidArgument("--" + opt->get_lnames()[0] +
                             " applies to streams only: add --stream (the DATASET arguments are "
                             "then raw text)");
    }
  }
  return Status::OK();
}

std::string ScanCacheDir(const StreamTextFlags& f) {
  if (f.no_scan_cache) return "";
  return f.options.scan_cache_dir.empty() ? "auto" : f.options.scan_cache_dir;
}

Result<StreamOptions> ToStreamOptions(const StreamFlags& f,
                                      const std::vector<std::string>& inputs) {
  StreamOptions so = f.options;
  so.inputs = inputs;
  so.scan_cache_dir = ScanCacheDir(f);
  return so;
}

Result<std::shared_ptr<const ChatEncoder>> StreamChatFromFlags(
    const StreamTextFlags& f, const std::vector<std::string>& inputs) {
  StreamFlags flags;
  static_cast<StreamTextFlags&>(flags) = f;
  STOKER_ASSIGN_OR_RETURN(StreamOptions so, ToStreamOptions(flags, inputs));
  return stream::OpenStreamChat(so, LoaderOptions{});
}

}  // namespace stoker::cli
