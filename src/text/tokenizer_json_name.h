// The options part of a tokenizer.json's identity name (TokenizerIdentity::name is the file's
// name plus this). A header of its own: callers that only name identities need not see the BPE
// engine's headers. Pure function; thread-safe.
#pragma once

#include <string>

#include "stoker/tokenizer.h"

namespace stoker {

// What the identity name of a tokenizer.json opened with `options` adds to its file name
// (" allow-special", " no-post-processor"): two openings of one file differ only there.
std::string TokenizerJsonNameOptions(const TokenizerOptions& options);

}  // namespace stoker
