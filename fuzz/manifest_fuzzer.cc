// libFuzzer target: the manifest JSON parser. Whatever it accepts must survive a round trip.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "format/manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto manifest = stoker::Manifest::Parse(text, "fuzz/manifest.json");
  if (!manifest.ok()) return 0;
  std::string json = manifest->ToJson();
  auto again = stoker::Manifest::Parse(json, "fuzz/roundtrip.json");
  if (!again.ok() || again->ToJson() != json) __builtin_trap();
  return 0;
}
