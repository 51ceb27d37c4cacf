// libFuzzer target: a Parquet file (footer, schema, pages, codecs, Dremel levels) and an Arrow IPC
// stream, read through the record sources over Arrow C++ (records/arrow_sources.h). In a build
// without Arrow both calls return kUnimplemented at once.
#include <cstddef>
#include <cstdint>
#include <string>

#include "records/arrow_sources.h"

namespace {

void Drain(stoker::Result<std::unique_ptr<stoker::RecordSource>> source) {
  if (!source.ok()) return;
  for (int i = 0; i < 100000; ++i) {
    auto r = (*source)->Next();
    if (!r.ok() || !r->has_value()) return;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  stoker::RecordShard shard;
  shard.path = "fuzz.parquet";
  shard.format = stoker::RecordFormat::kParquet;
  Drain(stoker::OpenParquetShard(shard, stoker::MemorySource("fuzz.parquet", bytes)));
  shard.format = stoker::RecordFormat::kArrow;
  Drain(stoker::OpenArrowIpcShard(shard, stoker::MemorySource("fuzz.arrow", bytes)));
  return 0;
}
