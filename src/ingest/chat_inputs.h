// Whether `stoker pack` reads chat data (docs/chat.md), and the ChatEncoder it then uses: chat
// when --train-on or --chat-template is given, or when, with the text field left at "text", the
// first record of the first JSONL input or record shard is a conversation (`messages`,
// `conversations`, or `prompt` + `completion`) without a "text" field. Thread-safe (no shared
// state).
#pragma once

#include <memory>

#include "chat/chat_encoder.h"
#include "ingest/pack_args.h"
#include "stoker/status.h"

namespace stoker {

// Null for text data. `options` are the pack's (their inputs, already resolved). Errors name the
// template or tokenizer that cannot be opened, or the bad --train-on value.
Result<std::shared_ptr<const ChatEncoder>> ChatEncoderForPack(const PackArgs& args,
                                                              const PackOptions& options);

// The tokenizer a pack records (identity, vocabulary size, EOS) and encodes text with:
// OpenTokenizer(args.tokenizer, `tokenizer_options`). For chat data read through a tokenizer.json
// it is the chat encoder's tokenizer, answering as that opening would (only the identity's
// options part differs), so the file is parsed once, not twice; its Encode is an error (the chat
// encoder encodes chat data).
Result<std::unique_ptr<Tokenizer>> OpenPackTokenizer(const PackArgs& args,
                                                     const PackOptions& options,
                                                     const TokenizerOptions& tokenizer_options);

}  // namespace stoker
