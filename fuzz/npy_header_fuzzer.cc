// libFuzzer target: the .npy header parser. An accepted header must describe exactly the file.
#include <cstddef>
#include <cstdint>

#include "format/npy_header.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto header = stoker::ParseNpyHeader(data, size, "fuzz.npy");
  if (!header.ok()) return 0;
  uint64_t bytes = header->num_elements * stoker::TokenDTypeSize(header->dtype);
  if (header->data_offset > size || size - header->data_offset != bytes) __builtin_trap();
  return 0;
}
