// Whether `stoker pack` reads chat data (docs/chat.md), and the ChatEncoder it then uses: chat
// when --train-on or --chat-template is given, or when, with the text field left at "text", the
// first record of the first JSONL input or record shard is a conversation (`messages`,
// `conversations`, or `prompt` + `completion`) without a "text" field. Thread-safe (no shared
// state).
#pragma once

#include <memory>

#include "ingest/pack_args.h"
#include "stoker/status.h"
#include "text/chat_encoder.h"

namespace stoker {

// Null for text data. `options` are the pack's (their inputs, already resolved). Errors name the
// template or tokenizer that cannot be opened, or the bad --train-on value.
Result<std::shared_ptr<const ChatEncoder>> ChatEncoderForPack(const PackArgs& args,
                                                              const PackOptions& options);

}  // namespace stoker
