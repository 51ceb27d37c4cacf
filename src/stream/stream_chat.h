// The chat side of a stream (docs/streaming.md, "Chat records"): whether a stream reads
// conversations, and the ChatEncoder that renders and masks them, chosen as `stoker pack` chooses
// it. Thread-safe (no shared state).
#pragma once

#include <memory>

#include "chat/chat_encoder.h"
#include "stoker/loader.h"
#include "stoker/stream.h"

namespace stoker::stream {

// Null for text: chat when train_on, chat_template or chat_field is given, or when the tokenizer
// is a model directory and the first record of the first input is a conversation without the
// text field. Errors name the template or tokenizer, prefixed "stream".
Result<std::shared_ptr<const ChatEncoder>> OpenStreamChat(const StreamOptions& options,
                                                          const LoaderOptions& loader);

}  // namespace stoker::stream
