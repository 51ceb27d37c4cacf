#include "stream/stream_chat.h"

#include <algorithm>
#include <filesystem>

#include "ingest/chat_inputs.h"

namespace stoker::stream {

Result<std::shared_ptr<const ChatEncoder>> OpenStreamChat(const StreamOptions& o,
                                                          const LoaderOptions& loader) {
  PackArgs args;
  args.tokenizer = o.tokenizer;
  args.tokenizer_options = o.tokenizer_options;
  args.text_field = o.text_field;
  args.train_on = o.train_on;
  args.chat_template = o.chat_template;
  args.chat_field = o.chat_field;
  args.chat_template_kwargs = o.chat_template_kwargs;
  PackOptions po;
  po.inputs = o.inputs;
  po.encoder.text_field = o.text_field;
  po.threads = std::max(1, loader.num_workers);
  // Detection reads the first record: only where a chat template can be (a model directory).
  std::error_code ec;
  const bool explicit_chat = !o.train_on.empty() || !o.chat_template.empty() ||
                             !o.chat_field.empty() || !o.chat_template_kwargs.empty();
  if (!explicit_chat && (o.tokenizer_instance || !std::filesystem::is_directory(o.tokenizer, ec))) {
    return std::shared_ptr<const ChatEncoder>();
  }
  Result<std::shared_ptr<const ChatEncoder>> chat = ChatEncoderForPack(args, po);
  if (!chat.ok()) return chat.status().WithContext("stream");
  return chat;
}

}  // namespace stoker::stream
