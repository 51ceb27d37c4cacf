// libFuzzer target: a LitData chunk (offset table, PyTree items and leaves, the Arrow row footer
// locator) decoded with a fixed config of every leaf kind.
#include <cstddef>
#include <cstdint>
#include <string>

#include "records/litdata_chunk.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  static const stoker::LitDataConfig config = [] {
    stoker::LitDataConfig c;
    c.data_format = {"int",   "str",  "no_header_numpy:5",   "numpy", "tensor",
                     "float", "bool", "no_header_tensor:16", "jpeg"};
    for (size_t i = 0; i < c.data_format.size(); ++i) c.leaf_names.push_back(std::to_string(i));
    return c;
  }();
  std::string_view arrow;
  (void)stoker::FindLitDataArrowRows(bytes, &arrow, "fuzz.bin");
  auto items = stoker::ParseLitDataChunk(bytes, "fuzz.bin");
  if (!items.ok()) return 0;
  for (auto [begin, end] : *items) {
    if (begin > end || end > size) __builtin_trap();  // ParseLitDataChunk promised this
    std::vector<stoker::Field> fields;
    (void)stoker::DecodeLitDataItem(bytes.substr(begin, end - begin), config, &fields);
    stoker::Field f;
    (void)stoker::DecodeLitDataLeaf("tensor", bytes.substr(begin, end - begin), &f);
  }
  return 0;
}
