// ChatEncoder: one conversation record in, its token ids and loss mask out — the model's chat
// template (chat_template.h), the --train-on rule and the encoding of chat_encode.h, behind the
// one call that `stoker pack`, the stream and Python share.
// Thread-safe: immutable after Open; Encode may be called from many threads at once.
#pragma once

#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "chat/chat_encode.h"
#include "chat/chat_template.h"
#include "stoker/status.h"
#include "stoker/tokenizer.h"

namespace stoker {

struct ChatEncoderOptions {
  std::string tokenizer;  // --tokenizer: a model directory or a tokenizer.json beside its config
  std::string chat_template;  // --chat-template PATH; empty = the model directory's own
  // --train-on; unset = `assistant` for messages, `completion` for prompt + completion records.
  std::optional<TrainOn> train_on;
  std::string field;  // --chat-field: the conversation's field; empty = detected
  nlohmann::ordered_json kwargs = nlohmann::ordered_json::object();  // extra template variables
  TokenizerOptions tokenizer_options;  // pattern, special, eos (allow_special is set here)
};

class ChatEncoder {
 public:
  // Opens the template and the tokenizer (control tokens recognised; without them on first
  // need). Errors name the template or tokenizer file.
  static Result<std::unique_ptr<ChatEncoder>> Open(const ChatEncoderOptions& options);

  // The ids and mask of one record (`messages`, `conversations` or `prompt` + `completion`).
  // Errors say what is wrong with the record or what the template raised; the caller adds where.
  // Taken by value: its messages are moved into the conversation.
  Result<ChatIds> Encode(nlohmann::ordered_json record) const;
  // The same with the --train-on rule (unset: by the record's kind) and the template variables
  // of this call instead of the options' (Python's Tokenizer.apply_chat_template).
  Result<ChatIds> Encode(nlohmann::ordered_json record, std::optional<TrainOn> train_on,
                         const nlohmann::ordered_json& kwargs) const;

  const ChatTemplate& chat_template() const { return template_; }
  // The tokenizer with control tokens recognised and no post-processor, and the options it was
  // opened with.
  const Tokenizer& tokenizer() const { return *control_; }
  TokenizerOptions tokenizer_options() const;
  const std::string& tokenizer_spec() const { return options_.tokenizer; }  // as given to Open
  // Everything besides the tokenizer that changes the ids and masks of a record: the template's
  // source, special and control tokens, --train-on and --chat-field (for cache keys and
  // fingerprints).
  std::string identity() const;

 private:
  ChatEncoder(ChatTemplate t, std::unique_ptr<Tokenizer> control, ChatEncoderOptions options);
  // The tokenizer without special tokens, opened on first use: only conversations that hold
  // control-token text need it, and opening a tokenizer.json is a fixed cost of every pack.
  Result<const Tokenizer*> Plain() const;

  ChatTemplate template_;
  std::unique_ptr<Tokenizer> control_;
  mutable std::once_flag plain_once_;
  mutable Result<std::unique_ptr<Tokenizer>> plain_ = Internal("not opened");
  TokenTexts token_texts_;  // ReadTokenTexts(*control_)
  ChatEncoderOptions options_;
};

// The options chat encoding opens `tokenizer` (a --tokenizer value) with: `options`, and the
// dummy prefix where transformers 5 puts it for that model (DummyPrefixAtStartOnly of the
// tokenizer_config.json beside it, text/model_files.h), so that the ids are apply_chat_template's.
Result<TokenizerOptions> ChatTokenizerOptions(const std::string& tokenizer,
                                              TokenizerOptions options);

// Whether a JSON record holds a conversation (`messages`, `conversations`, or `prompt` and
// `completion`) rather than a plain text field.
bool IsChatRecord(const nlohmann::ordered_json& record);

}  // namespace stoker
