#include "chat/chat_encoder.h"

#include <filesystem>
#include <utility>

#include "text/model_files.h"

namespace stoker {

namespace {

TokenizerOptions ControlOptions(TokenizerOptions options) {
  options.post_processor = false;  // the template writes its own BOS
  options.allow_special = true;
  return options;
}

}  // namespace

ChatEncoder::ChatEncoder(ChatTemplate t, std::unique_ptr<Tokenizer> control,
                         ChatEncoderOptions options)
    : template_(std::move(t)),
      control_(std::move(control)),
      token_texts_(ReadTokenTexts(*control_)),
      options_(std::move(options)) {}

Result<std::unique_ptr<ChatEncoder>> ChatEncoder::Open(const ChatEncoderOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool is_dir = fs::is_directory(options.tokenizer, ec);
  const std::string model_dir =
      is_dir ? options.tokenizer : fs::path(options.tokenizer).parent_path().string();
  ChatEncoderOptions opened = options;
  STOKER_ASSIGN_OR_RETURN(opened.tokenizer_options,
                          ChatTokenizerOptions(options.tokenizer, options.tokenizer_options));
  Result<ChatTemplate> t = options.chat_template.empty()
                               ? ChatTemplate::FromModelDir(model_dir)
                               : ChatTemplate::FromFile(options.chat_template, model_dir);
  if (!t.ok()) return t.status();
  STOKER_ASSIGN_OR_RETURN(
      std::unique_ptr<Tokenizer> control,
      OpenTokenizer(options.tokenizer, ControlOptions(opened.tokenizer_options)));
  if (control->identity().kind == "sentencepiece") {
    // transformers encodes a chat with a tokenizer it converts from the .model (control tokens
    // such as <s> read in the text, runs of spaces pre-tokenized its own way); stoker reads the
    // .model as sentencepiece does, so the ids would differ. Refused rather than silently other.
    return InvalidArgument(
        "chat data needs the model's tokenizer.json: a bare SentencePiece .model (" +
        control->identity().name +
        ") does not give transformers' chat ids (it reads no control tokens in the rendered text); "
        "give the model directory or its tokenizer.json");
  }
  return std::unique_ptr<ChatEncoder>(new ChatEncoder(std::move(*t), std::move(control), opened));
}

Result<TokenizerOptions> ChatTokenizerOptions(const std::string& tokenizer,
                                              TokenizerOptions options) {
  namespace fs = std::filesystem;
  if (tokenizer == "bytes") return options;
  std::error_code ec;
  // tokenizer_config.json sits in the model directory, beside a tokenizer file.
  const fs::path beside = fs::is_directory(tokenizer, ec) ? fs::path(tokenizer) / "tokenizer.json"
                                                          : fs::path(tokenizer);
  STOKER_ASSIGN_OR_RETURN(TokenizerConfig config, ReadTokenizerConfigBeside(beside.string()));
  options.dummy_prefix_at_start_only |= DummyPrefixAtStartOnly(config);
  return options;
}

TokenizerOptions ChatEncoder::tokenizer_options() const {
  return ControlOptions(options_.tokenizer_options);
}

Result<const Tokenizer*> ChatEncoder::Plain() const {
  std::call_once(plain_once_, [this] {
    TokenizerOptions topt = options_.tokenizer_options;
    topt.post_processor = false;
    topt.allow_special = false;
    topt.match_added_tokens = false;  // each piece it encodes is one control token's text
    plain_ = OpenTokenizer(options_.tokenizer, topt);
  });
  if (!plain_.ok()) return plain_.status();
  return plain_->get();
}

std::string ChatEncoder::identity() const {
  std::string id = "chat:" + std::to_string(template_.source_hash()) + ":train_on=" +
                   (options_.train_on ? std::to_string(int(*options_.train_on)) : "auto") +
                   ":field=" + options_.field + ":control=";
  for (const std::string& t : template_.control_tokens()) id += t + '\x1f';
  return id + ":kwargs=" + options_.kwargs.dump();
}

Result<ChatIds> ChatEncoder::Encode(nlohmann::ordered_json record) const {
  return Encode(std::move(record), options_.train_on, options_.kwargs);
}

Result<ChatIds> ChatEncoder::Encode(nlohmann::ordered_json record,
                                    std::optional<TrainOn> train_on_option,
                                    const nlohmann::ordered_json& kwargs) const {
  STOKER_ASSIGN_OR_RETURN(Conversation conv, ParseConversation(std::move(record), options_.field));
  TrainOn train_on = train_on_option.value_or(conv.is_prompt_completion ? TrainOn::kCompletion
                                                                        : TrainOn::kAssistant);
  STOKER_ASSIGN_OR_RETURN(ChatSpans spans, template_.Spans(conv, train_on, kwargs));
  std::string marked;
  if (template_.NeedsControlTokenMarks(conv, kwargs)) {
    STOKER_ASSIGN_OR_RETURN(marked, template_.RenderMarkedControlTokens(conv, kwargs));
    // The template took a marked token apart (Qwen3 splits an answer at "</think>" and strips
    // the newlines around it, which the marks hide): which of the text's control tokens came from
    // the conversation is lost, so every one is a token, as transformers encodes a chat without
    // sanitize_control_tokens (docs/chat.md).
    if (StripChatMarks(marked) != spans.text) marked = spans.text;
  } else {
    marked = spans.text;  // marking would change no string: the same rendering
  }
  // Only text between marks is encoded with the plain tokenizer.
  const Tokenizer* plain = control_.get();
  if (marked.find(kChatMarkStart) != std::string::npos) {
    STOKER_ASSIGN_OR_RETURN(plain, Plain());
  }
  Result<ChatIds> ids =
      EncodeChat(*control_, *plain, marked, spans.text, spans.trained, token_texts_);
  if (!ids.ok() && ids.status().code() == StatusCode::kInvalidArgument) {
    // The conversation's error names the model it was encoded with (the caller adds where).
    return InvalidArgument(ids.status().message() + " (tokenizer " + options_.tokenizer + ")");
  }
  return ids;
}

bool IsChatRecord(const nlohmann::ordered_json& record) {
  if (!record.is_object()) return false;
  return record.contains("messages") || record.contains("conversations") ||
         (record.contains("prompt") && record.contains("completion"));
}

}  // namespace stoker
