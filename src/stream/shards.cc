#include "stream/shards.h"

#include <algorithm>
#include <numeric>

#include "ingest/record_inputs.h"
#include "records/byte_stream.h"

namespace stoker::stream {

uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t MixKey(uint64_t a, uint64_t b, uint64_t c) {
  uint64_t s = a;
  uint64_t h = SplitMix64(&s);
  s = h ^ b;
  h = SplitMix64(&s);
  s = h ^ c;
  return SplitMix64(&s);
}

Result<std::vector<StreamShard>> MakeShards(const std::vector<std::string>& inputs,
                                            uint64_t min_shards) {
  STOKER_ASSIGN_OR_RETURN(std::vector<InputFile> files,
                          ExpandPackInputs(inputs, PackInputFormat::kAuto));
  if (files.empty()) return InvalidArgument("stream: no input file");
  uint64_t splittable_bytes = 0;
  for (const InputFile& f : files) {
    if (f.kind == InputKind::kJsonl && CompressionFromName(f.path) == Compression::kNone) {
      splittable_bytes += f.size_bytes;
    }
  }
  std::vector<StreamShard> shards;
  const bool split = files.size() < min_shards && splittable_bytes > 0;
  for (uint32_t i = 0; i < files.size(); ++i) {
    const InputFile& f = files[i];
    StreamShard s;
    s.path = f.path;
    s.file = i;
    s.jsonl = f.kind == InputKind::kJsonl;
    s.records = f.kind == InputKind::kRecords;
    if (s.records) s.record = f.shard;
    s.compressed = CompressionFromName(f.path) != Compression::kNone;
    s.end = f.size_bytes;
    if (!split || !s.jsonl || s.compressed || f.size_bytes == 0) {
      shards.push_back(s);
      continue;
    }
    // This file's share of the missing shards, at least one range.
    const uint64_t extra = min_shards - files.size();
    uint64_t parts = 1 + (extra * f.size_bytes + splittable_bytes - 1) / splittable_bytes;
    parts = std::min<uint64_t>(parts, f.size_bytes);
    for (uint64_t p = 0; p < parts; ++p) {
      s.begin = f.size_bytes * p / parts;
      s.end = f.size_bytes * (p + 1) / parts;
      shards.push_back(s);
    }
  }
  return shards;
}

std::vector<uint32_t> ShardOrder(size_t n, uint64_t seed, uint64_t epoch) {
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  uint64_t rng = MixKey(seed, epoch, 0x5eed5a4d);
  for (size_t i = order.size(); i > 1; --i) {
    std::swap(order[i - 1], order[SplitMix64(&rng) % i]);
  }
  return order;
}

std::vector<std::vector<uint32_t>> DealShards(const std::vector<StreamShard>& shards, uint64_t seed,
                                              uint64_t epoch, uint32_t world_size) {
  const std::vector<uint32_t> order = ShardOrder(shards.size(), seed, epoch);
  std::vector<std::vector<uint32_t>> dealt(world_size);
  std::vector<uint64_t> load(world_size, 0);
  for (uint32_t s : order) {
    const size_t r = std::min_element(load.begin(), load.end()) - load.begin();
    dealt[r].push_back(s);
    load[r] += std::max<uint64_t>(shards[s].size_bytes(), 1);
  }
  return dealt;
}

}  // namespace stoker::stream
