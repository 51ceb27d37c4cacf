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

void AddChatFlags(CLI::App* sub, std::string* train_on, std::string* chat_template,
                  std::string* chat_field, const std::string& scope) {
  sub->add_option("--train-on", *train_on,
                  scope +
                      " (docs/chat.md): the tokens the loss mask trains: assistant (every "
                      "assistant turn; the default for messages), last (the final assistant "
                      "turn), completion (the default for prompt/completion records) or all")
      ->check(CLI::IsMember({"assistant", "last", "completion", "all"}));
  sub->add_option("--chat-template", *chat_template,
                  scope +
                      ": a Jinja chat template file to use instead of the model directory's "
                      "own (chat_template.jinja or tokenizer_config.json's chat_template)");
  sub->add_option("--chat-field", *chat_field,
                  scope +
                      ": the field holding each record's conversation (a list of messages "
                      "{role, content} or ShareGPT turns {from, value}); default: detected "
                      "(messages, conversations, or prompt + completion)");
}

}  // namespace stoker::cli
