#include "stoker/tokenizer_flags.h"

namespace stoker::cli {

void AddBpeTokenizerFlags(CLI::App* sub, TokenizerOptions* options) {
  sub->add_option("--pattern", options->pattern,
                  "tiktoken files: the pre-tokenizer, r50k | p50k | cl100k | o200k or a regex");
  sub->add_option("--special", options->special,
                  "tiktoken files: special tokens NAME=ID,... (default: the pattern's own set)");
  sub->add_flag("--allow-special", options->allow_special,
                "Special-token text in a document becomes the special id (default: it is "
                "ordinary text, as tiktoken's encode_ordinary)");
  sub->add_option("--eos", options->eos,
                  "EOS token appended to each document, by text or id (default: the file's "
                  "end-of-text token)");
  sub->add_flag("!--no-post-processor", options->post_processor,
                "tokenizer.json: ignore its post_processor (e.g. the BOS template)");
}

}  // namespace stoker::cli
