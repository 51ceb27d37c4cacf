// libFuzzer target: the length index (format/length_index.h): the header parser on any bytes,
// then, for a header that parses, Open and Verify over the bytes as a file, with the properties a
// verified index promises.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "format/length_index.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < stoker::kLengthIndexHeaderBytes) {
    (void)stoker::ParseLengthIndexHeader(data, size, "fuzz.stkidx");
    return 0;
  }
  auto header = stoker::ParseLengthIndexHeader(data, size, "fuzz.stkidx");
  if (!header.ok()) return 0;
  // Open maps a file: write the input to one of this process's own.
  static const std::string path = "/tmp/stoker-fuzz-" + std::to_string(getpid()) + ".stkidx";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  const bool written = std::fwrite(data, 1, size, f) == size;
  std::fclose(f);
  if (!written) return 0;
  auto index = stoker::LengthIndex::Open(path);
  if (index.ok()) {
    const stoker::LengthIndex& ix = **index;
    const uint64_t shards = ix.header().num_shards;
    for (uint64_t c = 0; c < ix.header().num_chunks(); ++c) (void)ix.VerifyChunk(c);
    if (ix.Verify().ok()) {
      // A verified index: shard boundaries from 0 to the document count, never decreasing, and
      // lengths that add up to the header's totals.
      if (ix.shard_first_document(0) != 0) __builtin_trap();
      if (ix.shard_first_document(shards) != ix.num_documents()) __builtin_trap();
      for (uint64_t s = 0; s < shards; ++s) {
        if (ix.shard_first_document(s) > ix.shard_first_document(s + 1)) __builtin_trap();
      }
      uint64_t total = 0;
      for (uint64_t d = 0; d < ix.num_documents(); ++d) total += ix.lengths()[d];
      if (total != ix.header().total_tokens) __builtin_trap();
    }
  }
  std::remove(path.c_str());
  return 0;
}
