// The byte-level BPE options on the command line, the same for `pack` and `tokenize`:
// --pattern --special --allow-special --eos --no-post-processor; and the chat options, the same
// for `pack` and the streams: --train-on --chat-template --chat-field.
// Not thread-safe: one command at a time.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "stoker/tokenizer.h"

namespace stoker::cli {

// The rows of TokenizerOptionTable() that have a CLI spelling.
void AddBpeTokenizerFlags(CLI::App* sub, TokenizerOptions* options);

// --train-on, --chat-template and --chat-field (docs/chat.md); `scope` opens each help text
// ("Chat data", "Streams of chat records").
void AddChatFlags(CLI::App* sub, std::string* train_on, std::string* chat_template,
                  std::string* chat_field, const std::string& scope);

}  // namespace stoker::cli
