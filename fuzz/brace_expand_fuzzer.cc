// libFuzzer target: shard-list brace expansion (bounded output, no crash on any pattern).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "records/brace_expand.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 256) return 0;
  auto names = stoker::ExpandBraces(std::string_view(reinterpret_cast<const char*>(data), size),
                                    10000);
  if (names.ok() && names->size() > 10000) __builtin_trap();
  return 0;
}
