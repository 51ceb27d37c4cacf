#include "stream_flags.h"

#include "cli_common.h"
#include "number_flags.h"
#include "stream/stream_chat.h"
#include "stream/stream_options_table.h"
#include "text/utf8.h"
#include "tokenizer_flags.h"

namespace stoker::cli {

namespace {

// Help texts are the option table's (stream/stream_options_table.h).
std::string Doc(std::string_view name) {
  return std::string(FindOption(stream::StreamOptionTable(), name)->doc);
}

}  // namespace

void AddStreamTextFlags(CLI::App* sub, StreamTextFlags* f) {
  sub->add_option("--tokenizer", f->tokenizer, Doc("tokenizer"))->capture_default_str();
  AddBpeTokenizerFlags(sub, &f->tokenizer_options);
  sub->add_option("--text-field", f->text_field, Doc("text_field"))->capture_default_str();
  sub->add_option("--utf8", f->utf8, Doc("utf8"))
      ->check(CLI::IsMember({"replace", "skip", "fail"}))
      ->capture_default_str();
  if (sub->get_option_no_throw("--on-error") == nullptr) {
    sub->add_option("--on-error", f->on_error, "Streams: bad records: fail or skip")
        ->check(CLI::IsMember({"fail", "skip"}))
        ->capture_default_str();
  }
  AddChatFlags(sub, &f->train_on, &f->chat_template, &f->chat_field, "Streams of chat records");
  auto* dir = sub->add_option("--scan-cache", f->scan_cache,
                              "Streams: where pre-scans (`stoker scan`) are looked up and written "
                              "(default: the cache directory's stream-scan/)");
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
  sub->add_option("--shuffle-buffer", f->shuffle_buffer, Doc("shuffle_buffer"))
      ->check(WholeNumber<uint64_t>(1))
      ->capture_default_str();
  sub->add_option("--steps-per-epoch", f->steps_per_epoch, Doc("steps_per_epoch"))
      ->check(WholeNumber<uint64_t>(0))
      ->capture_default_str();
  sub->add_option("--split-factor", f->split_factor, Doc("split_factor"))
      ->check(WholeNumber<uint64_t>(1))
      ->capture_default_str();
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
  return f.scan_cache.empty() ? "auto" : f.scan_cache;
}

Result<StreamOptions> ToStreamOptions(const StreamFlags& f,
                                      const std::vector<std::string>& inputs) {
  StreamOptions so;
  so.inputs = inputs;
  so.tokenizer = f.tokenizer;
  so.tokenizer_options = f.tokenizer_options;
  so.text_field = f.text_field;
  STOKER_ASSIGN_OR_RETURN(so.utf8, ParseUtf8Policy(f.utf8));
  so.shuffle_buffer = f.shuffle_buffer;
  so.steps_per_epoch = f.steps_per_epoch;
  so.split_factor = f.split_factor;
  so.scan_cache_dir = ScanCacheDir(f);
  so.train_on = f.train_on;
  so.chat_template = f.chat_template;
  so.chat_field = f.chat_field;
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
