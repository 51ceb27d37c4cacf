#include "tokenizer_flags.h"

#include "option_flags.h"
#include "text/tokenizer_options_table.h"

namespace stoker::cli {

void AddBpeTokenizerFlags(CLI::App* sub, TokenizerOptions* options) {
  for (const OptionRow<TokenizerOptions>& row : TokenizerOptionTable()) {
    AddOptionFlag(sub, row, options);
  }
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
