#include "stoker/stream_flags.h"

#include "stoker/number_flags.h"
#include "stoker/tokenizer_flags.h"

namespace stoker::cli {

void AddStreamTextFlags(CLI::App* sub, StreamTextFlags* f) {
  sub->add_option("--tokenizer", f->tokenizer, "--stream: the tokenizer (as for pack)")
      ->capture_default_str();
  AddBpeTokenizerFlags(sub, &f->tokenizer_options);
  sub->add_option("--text-field", f->text_field,
                  "--stream: the JSONL field, or the record shards' field, holding the text")
      ->capture_default_str();
}

void AddStreamFlags(CLI::App* sub, StreamFlags* f) {
  sub->add_flag("--stream", f->stream,
                "Read the DATASET arguments as raw text (JSONL, .gz, .zst, text files, record "
                "shards) through the streaming path: shuffle buffer, online tokenization "
                "(docs/streaming.md)");
  AddStreamTextFlags(sub, f);
  sub->add_option("--shuffle-buffer", f->shuffle_buffer, "--stream: documents buffered")
      ->check(WholeNumber<uint64_t>(1))
      ->capture_default_str();
  sub->add_option("--steps-per-epoch", f->steps_per_epoch,
                  "--stream: fix the epoch length (0 = pre-scan the input once)")
      ->check(WholeNumber<uint64_t>(0))
      ->capture_default_str();
}

stream::StreamOptions ToStreamOptions(const StreamFlags& f, const std::vector<std::string>& inputs) {
  stream::StreamOptions so;
  so.inputs = inputs;
  so.tokenizer = f.tokenizer;
  so.tokenizer_options = f.tokenizer_options;
  so.text_field = f.text_field;
  so.shuffle_buffer = f.shuffle_buffer;
  so.steps_per_epoch = f.steps_per_epoch;
  return so;
}

}  // namespace stoker::cli
