#include "ingest/chat_inputs.h"

#include <nlohmann/json.hpp>
#include <string>

#include "ingest/line_reader.h"
#include "ingest/record_inputs.h"
#include "ingest/remote_inputs.h"
#include "text/tokenizer_json_name.h"

namespace stoker {
namespace {

// Whether the first record (a non-blank JSONL line, or a record of a record shard) of the first
// input that has one is a conversation record without
// `text_field`. A line that is not JSON says no: the pack then reports it as it reports any.
// Text files are skipped.
Result<bool> FirstRecordIsConversation(const PackOptions& options) {
  STOKER_ASSIGN_OR_RETURN(std::vector<InputFile> files,
                          ExpandPackInputs(options.inputs, options.input_format));
  for (const InputFile& file : files) {
    if (file.kind == InputKind::kRecords) {
      STOKER_ASSIGN_OR_RETURN(std::unique_ptr<RecordDocumentReader> records,
                              RecordDocumentReader::Open(file, kWholeRecord, ""));
      RawDocument doc;
      STOKER_ASSIGN_OR_RETURN(bool any, records->Next(&doc));
      if (!any) continue;
      nlohmann::ordered_json record = nlohmann::ordered_json::parse(doc.data, nullptr, false);
      return IsChatRecord(record) && !record.contains(options.encoder.text_field);
    }
    if (file.kind != InputKind::kJsonl) continue;
    STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ByteStream> stream, OpenInputStream(file));
    LineReader lines(std::move(stream));
    std::string line;
    while (true) {
      STOKER_ASSIGN_OR_RETURN(bool more, lines.Next(&line));
      if (!more) break;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      nlohmann::ordered_json record = nlohmann::ordered_json::parse(line, nullptr, false);
      return IsChatRecord(record) && !record.contains(options.encoder.text_field);
    }
  }
  return false;
}

// The chat encoder's tokenizer under the pack's identity (see OpenPackTokenizer).
class ChatPackTokenizer final : public Tokenizer {
 public:
  ChatPackTokenizer(std::shared_ptr<const ChatEncoder> chat, TokenizerIdentity identity)
      : chat_(std::move(chat)), identity_(std::move(identity)) {}

  Status Encode(std::string_view, std::vector<int32_t>*) const override {
    return Internal("chat data is encoded by the chat encoder, not by the pack's tokenizer");
  }
  Status Decode(std::span<const int32_t> ids, std::string* out) const override {
    return chat_->tokenizer().Decode(ids, out);
  }
  uint64_t vocab_size() const override { return chat_->tokenizer().vocab_size(); }
  int32_t eos_id() const override { return chat_->tokenizer().eos_id(); }
  const TokenizerIdentity& identity() const override { return identity_; }

 private:
  std::shared_ptr<const ChatEncoder> chat_;
  TokenizerIdentity identity_;
};

// --chat-template-kwargs: a JSON object of template variables; empty = none.
Result<nlohmann::ordered_json> ParseTemplateKwargs(const std::string& text) {
  if (text.empty()) return nlohmann::ordered_json::object();
  nlohmann::ordered_json kwargs = nlohmann::ordered_json::parse(text, nullptr, false);
  if (kwargs.is_discarded() || !kwargs.is_object()) {
    return InvalidArgument(
        "--chat-template-kwargs must be a JSON object of template variables, "
        "such as '{\"enable_thinking\": false}'; got: " +
        text.substr(0, 200));
  }
  return kwargs;
}

}  // namespace

Result<std::unique_ptr<Tokenizer>> OpenPackTokenizer(const PackArgs& args,
                                                     const PackOptions& options,
                                                     const TokenizerOptions& tokenizer_options) {
  if (options.chat != nullptr) {
    const TokenizerIdentity& chat_id = options.chat->tokenizer().identity();
    const TokenizerOptions chat_options = options.chat->tokenizer_options();
    const std::string chat_part = TokenizerJsonNameOptions(chat_options);
    // Opened from the same spec with the same options but allow_special and post_processor,
    // which change neither the vocabulary nor the EOS of a tokenizer.json.
    if (chat_id.kind == "tokenizer.json" && chat_id.name.ends_with(chat_part) &&
        args.tokenizer == options.chat->tokenizer_spec() &&
        chat_options.eos == tokenizer_options.eos &&
        chat_options.pattern == tokenizer_options.pattern &&
        chat_options.special == tokenizer_options.special) {
      TokenizerIdentity id = chat_id;
      id.name = chat_id.name.substr(0, chat_id.name.size() - chat_part.size()) +
                TokenizerJsonNameOptions(tokenizer_options);
      return std::unique_ptr<Tokenizer>(new ChatPackTokenizer(options.chat, std::move(id)));
    }
  }
  return OpenTokenizer(args.tokenizer, tokenizer_options);
}

Result<std::shared_ptr<const ChatEncoder>> ChatEncoderForPack(const PackArgs& args,
                                                              const PackOptions& options) {
  bool chat = !args.train_on.empty() || !args.chat_template.empty() || !args.chat_field.empty() ||
              !args.chat_template_kwargs.empty();
  // A task of a split pack lists nothing (it reads the recorded input list), and chat data is
  // packed in one task for now: the records are not looked at there.
  if (!chat && args.text_field == "text" && options.task_count <= 1) {
    STOKER_ASSIGN_OR_RETURN(chat, FirstRecordIsConversation(options));
  }
  if (!chat) return std::shared_ptr<const ChatEncoder>();
  ChatEncoderOptions chat_options;
  chat_options.tokenizer = args.tokenizer;
  chat_options.chat_template = args.chat_template;
  chat_options.field = args.chat_field;
  chat_options.tokenizer_options = args.tokenizer_options;
  chat_options.tokenizer_options.load_threads = options.threads;
  STOKER_ASSIGN_OR_RETURN(chat_options.kwargs, ParseTemplateKwargs(args.chat_template_kwargs));
  if (!args.train_on.empty()) {
    STOKER_ASSIGN_OR_RETURN(TrainOn train_on, ParseTrainOn(args.train_on));
    chat_options.train_on = train_on;
  }
  if (args.tokenizer == "bytes") {
    return InvalidArgument(
        "chat data needs the model's tokenizer and chat template: give --tokenizer MODEL_DIR "
        "(tokenizer.json + tokenizer_config.json)");
  }
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ChatEncoder> encoder, ChatEncoder::Open(chat_options));
  return std::shared_ptr<const ChatEncoder>(std::move(encoder));
}

}  // namespace stoker
