// libFuzzer target: an MDS shard (header, offsets, config JSON, column decoding).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "records/mds_columns.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto layout = stoker::ParseMdsShardLayout(bytes, "fuzz.mds");
  if (!layout.ok()) return 0;
  std::vector<stoker::Field> fields;
  for (uint32_t i = 0; i < layout->samples; ++i) {
    uint32_t begin, end;
    std::memcpy(&begin, bytes.data() + 4 + 4 * i, 4);
    std::memcpy(&end, bytes.data() + 8 + 4 * i, 4);
    if (begin > end || end > size) __builtin_trap();  // ParseMdsShardLayout promised this
    (void)stoker::DecodeMdsSample(bytes.substr(begin, end - begin), layout->columns, &fields);
  }
  return 0;
}
