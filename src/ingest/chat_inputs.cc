#include "ingest/chat_inputs.h"

#include <nlohmann/json.hpp>
#include <string>

#include "ingest/line_reader.h"
#include "ingest/record_inputs.h"
#include "ingest/remote_inputs.h"

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

}  // namespace

Result<std::shared_ptr<const ChatEncoder>> ChatEncoderForPack(const PackArgs& args,
                                                              const PackOptions& options) {
  bool chat = !args.train_on.empty() || !args.chat_template.empty() || !args.chat_field.empty();
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
