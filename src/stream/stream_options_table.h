// StreamOptions' option table (common/option_table.h): each field declared once, with its doc,
// CLI flag (tools/stoker/stream_flags.h) and Python keyword (stoker.Stream). The tokenizer's own
// options are TokenizerOptionTable()'s rows (text/tokenizer_options_table.h).
// Thread-safe: built once, immutable.
#pragma once

#include "common/option_table.h"
#include "stoker/stream.h"

namespace stoker::stream {

const OptionTable<StreamOptions>& StreamOptionTable();

}  // namespace stoker::stream
