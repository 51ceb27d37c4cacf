// PaddedJsonParser: simdjson's DOM parser together with the padded copy of the input it reads.
// simdjson reads up to SIMDJSON_PADDING bytes past the end of its input, so each text is copied
// into a buffer that has them (a copy at memory speed, and no allocation once the buffer has
// grown). Shared by the JSONL field reader (ingest/) and the chat record parser (text/).
// Thread contract: one thread at a time; callers keep one per thread.
#pragma once

#include <simdjson.h>

#include <memory>
#include <string_view>

namespace stoker {

class PaddedJsonParser {
 public:
  PaddedJsonParser();
  ~PaddedJsonParser();
  PaddedJsonParser(const PaddedJsonParser&) = delete;
  PaddedJsonParser& operator=(const PaddedJsonParser&) = delete;

  // Parses `text` into `*root`, valid until the next Parse. A parser sized for a text of 16 MiB or
  // more gives that memory back before the next smaller text: one huge line must not pin its size
  // on a thread for the rest of the run.
  simdjson::error_code Parse(std::string_view text, simdjson::dom::element* root);

 private:
  // The parser lives in the .cc: its layout depends on how simdjson was configured
  // (SIMDJSON_THREADS_ENABLED), which only targets linking simdjson see.
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace stoker
