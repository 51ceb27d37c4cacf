// libFuzzer target: the Megatron `.idx` parser (header and full checks) and reads through it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "format/megatron_index.h"
#include "format/token_convert.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A small and a large .bin, so both the "past the end" and the accepting paths are reached.
  for (uint64_t bin_size : {uint64_t{64}, uint64_t{1} << 40}) {
    auto index = stoker::MegatronIndex::Parse(data, size, "fuzz.idx", bin_size, "fuzz.bin",
                                              stoker::MegatronIndex::Checks::kFull);
    if (!index.ok()) continue;
    // A valid index must describe sequences that lie inside the .bin.
    const uint64_t item = stoker::TokenDTypeSize(index->dtype());
    for (uint64_t i = 0; i < index->num_sequences(); ++i) {
      uint64_t end = static_cast<uint64_t>(index->sequence_pointer(i)) +
                     static_cast<uint64_t>(index->sequence_length(i)) * item;
      if (index->sequence_length(i) < 0 || end > bin_size) __builtin_trap();
    }
    if (index->num_documents() + 1 > size) __builtin_trap();
  }
  return 0;
}
