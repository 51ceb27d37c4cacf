#include "stream/stream_options_table.h"

#include "text/utf8.h"

namespace stoker::stream {

const OptionTable<StreamOptions>& StreamOptionTable() {
  using S = StreamOptions;
  static const OptionTable<S> table = [] {
    OptionTable<S> t;
    t.push_back(OtherOption<S>("inputs", "Raw text inputs: files, directories, globs").Py("paths"));
    t.push_back(TextOption<S>("tokenizer", "Streams: the tokenizer (as for pack)", &S::tokenizer)
                    .Cli("--tokenizer"));
    t.push_back(
        OtherOption<S>("tokenizer_options", "The tokenizer's options (TokenizerOptionTable's rows)")
            .Py("-"));
    t.push_back(OtherOption<S>("tokenizer_instance", "An open tokenizer (C++ only)").Py("-"));
    t.push_back(TextOption<S>("text_field",
                              "Streams: the JSONL field, or the record shards' field, holding "
                              "the text",
                              &S::text_field)
                    .Cli("--text-field"));
    t.push_back(ChoiceOption<S>("utf8", "Streams: invalid UTF-8: replace, skip or fail", &S::utf8,
                                {"replace", "skip", "fail"}, Utf8PolicyName, ParseUtf8Policy)
                    .Cli("--utf8"));
    t.push_back(
        WholeOption<S>("shuffle_buffer", "--stream: documents buffered", &S::shuffle_buffer, 1)
            .Cli("--shuffle-buffer")
            .InState());
    t.push_back(WholeOption<S>("steps_per_epoch",
                               "--stream: fix the epoch length (0 = pre-scan the input once)",
                               &S::steps_per_epoch)
                    .Cli("--steps-per-epoch")
                    .InState());
    t.push_back(WholeOption<S>("split_factor",
                               "--stream: files are cut into byte ranges until there are world "
                               "size x this many shards",
                               &S::split_factor, 1)
                    .Cli("--split-factor"));
    t.push_back(WholeOption<S>("encode_threads",
                               "Threads that decode and tokenize (0: the loader's num_workers)",
                               &S::encode_threads)
                    .Py("-"));
    t.push_back(TextOption<S>("scan_cache_dir",
                              "Streams: where pre-scans (`stoker scan`) are looked up and written "
                              "(\"auto\": the cache root's stream-scan/)",
                              &S::scan_cache_dir)
                    .Cli("--scan-cache")
                    .Py("scan_cache"));
    t.push_back(TextOption<S>("train_on",
                              "Streams of chat records: the tokens the loss mask trains",
                              &S::train_on)
                    .Cli("--train-on"));
    t.push_back(TextOption<S>("chat_template",
                              "Streams of chat records: a Jinja chat template file",
                              &S::chat_template)
                    .Cli("--chat-template"));
    t.push_back(TextOption<S>("chat_field",
                              "Streams of chat records: the field holding the conversation",
                              &S::chat_field)
                    .Cli("--chat-field"));
    t.push_back(TextOption<S>("chat_template_kwargs",
                              "Streams of chat records: extra template variables, a JSON object "
                              "such as '{\"enable_thinking\": false}'",
                              &S::chat_template_kwargs)
                    .Cli("--chat-template-kwargs"));
    return t;
  }();
  return table;
}

}  // namespace stoker::stream
