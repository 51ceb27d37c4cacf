// libFuzzer target: the tar reader and WebDataset grouping. Every input ends in records or one
// error; a sample never has two fields of the same name and names are never unsafe.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "records/tar_reader.h"
#include "records/webdataset_source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  auto source = stoker::OpenWebDatasetShard(stoker::MemorySource("fuzz.tar", bytes),
                                            stoker::Compression::kNone);
  for (int i = 0; i < 100000; ++i) {
    auto r = source->Next();
    if (!r.ok() || !*r) break;
    std::set<std::string> names;
    for (const auto& f : (*r)->fields) {
      if (!names.insert(f.name).second) __builtin_trap();
    }
  }
  stoker::TarReader tar(stoker::OpenSourceStream(stoker::MemorySource("fuzz.tar", bytes),
                                                 stoker::Compression::kNone),
                        "fuzz.tar");
  for (int i = 0; i < 100000; ++i) {
    auto m = tar.Next();
    if (!m.ok() || !*m) break;
    if (stoker::IsUnsafeMemberName((*m)->name)) __builtin_trap();
  }
  return 0;
}
