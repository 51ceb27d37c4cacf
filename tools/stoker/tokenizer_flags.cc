#include "tokenizer_flags.h"

namespace stoker::cli {

void AddBpeTokenizerFlags(CLI::App* sub, TokenizerOptions* options) {
  sub->add_option("--pattern", options->pattern,
                  "tiktoken files: the pre-tokenizer, r50k | p50k | cl100k | o200k | llama3 | "
                  "llama4 or a regex");
  sub->add_option("--special", options->special,
                  "tiktoken files: special tokens NAME=ID,... (default: the pattern's own set)");
  sub->add_flag("--allow-special", options->allow_special,
                "Special-token text in a document becomes the special id (default: it is "
                "ordinary text, as tiktoken's encode_ordinary)");
  sub->add_option("--eos", options->eos,
                  "EOS token appended to each document, by text or id (default: the eos_token of "
                  "the tokenizer_config.json beside the file, else the file's end-of-text token)");
  sub->add_flag_callback(
      "--no-post-processor", [options] { options->post_processor = false; },
      "ignore a tokenizer.json's post_processor (e.g. the BOS template) and "
      "tokenizer_config.json's add_bos_token");
}

}  // namespace stoker::cli
