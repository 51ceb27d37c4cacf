// The byte-level BPE options on the command line, the same for `pack` and `tokenize`:
// --pattern --special --allow-special --eos --no-post-processor.
// Not thread-safe: one command at a time.
#pragma once

#include <CLI/CLI.hpp>

#include "text/tokenizer.h"

namespace stoker::cli {

void AddBpeTokenizerFlags(CLI::App* sub, TokenizerOptions* options);

}  // namespace stoker::cli
