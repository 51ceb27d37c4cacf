// The object behind stoker.Tokenizer (register_text.cc), shared with the chat bindings
// (register_chat.cc). Used under the GIL; the tokenizer itself is thread-safe.
#pragma once

#include <memory>

#include "id_lists.h"
#include "stoker/tokenizer.h"

namespace stoker::python {

struct PyTokenizer {
  std::unique_ptr<Tokenizer> tokenizer;
  IntCache ints;  // guarded by the GIL
};

}  // namespace stoker::python
