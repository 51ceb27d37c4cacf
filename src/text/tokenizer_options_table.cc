#include "text/tokenizer_options_table.h"

namespace stoker {

const OptionTable<TokenizerOptions>& TokenizerOptionTable() {
  using T = TokenizerOptions;
  static const OptionTable<T> table = [] {
    OptionTable<T> t;
    t.push_back(TextOption<T>("pattern",
                              "tiktoken files: the pre-tokenizer, r50k | p50k | cl100k | o200k | "
                              "llama3 | llama4 or a regex",
                              &T::pattern)
                    .Cli("--pattern"));
    t.push_back(TextOption<T>("special",
                              "tiktoken files: special tokens NAME=ID,... (default: the "
                              "pattern's own set)",
                              &T::special)
                    .Cli("--special"));
    t.push_back(BoolOption<T>("allow_special",
                              "Special-token text in a document becomes the special id "
                              "(default: it is ordinary text, as tiktoken's encode_ordinary)",
                              &T::allow_special)
                    .Cli("--allow-special"));
    t.push_back(BoolOption<T>("match_added_tokens",
                              "Added tokens are read in the text (chat encoding turns it off)",
                              &T::match_added_tokens)
                    .Py("-"));
    t.push_back(TextOption<T>("eos",
                              "EOS token appended to each document, by text or id (default: the "
                              "eos_token of the tokenizer_config.json beside the file, else the "
                              "file's end-of-text token)",
                              &T::eos)
                    .Cli("--eos"));
    t.push_back(BoolOption<T>("post_processor",
                              "Apply a tokenizer.json's post_processor (e.g. the BOS template) "
                              "and tokenizer_config.json's add_bos_token",
                              &T::post_processor)
                    .Cli("--no-post-processor"));
    t.push_back(BoolOption<T>("dummy_prefix_at_start_only",
                              "SentencePiece-family tokenizer.json: the dummy prefix only at the "
                              "start (set by chat encoding)",
                              &T::dummy_prefix_at_start_only)
                    .Py("-"));
    t.push_back(WholeOption<T>("load_threads",
                               "Threads that build a tiktoken file's tables (0 = all cores)",
                               &T::load_threads)
                    .Py("-"));
    return t;
  }();
  return table;
}

}  // namespace stoker
