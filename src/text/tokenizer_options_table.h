// TokenizerOptions' option table (common/option_table.h): each field declared once, with its doc,
// CLI flag (tools/stoker/tokenizer_flags.h registers those that have one) and Python keyword
// (stoker.Tokenizer, and the tokenizer keywords of stoker.pack and stoker.Stream).
// Thread-safe: built once, immutable.
#pragma once

#include "common/option_table.h"
#include "stoker/tokenizer.h"

namespace stoker {

const OptionTable<TokenizerOptions>& TokenizerOptionTable();

}  // namespace stoker
