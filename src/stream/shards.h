// Shards of a streamed corpus and how each epoch deals them to ranks.
//
// A shard is a whole input file or a byte range [begin, end) of an uncompressed JSONL file; a
// range owns the lines that start inside it, so ranges cut at line boundaries and no line is lost
// or read twice. Files are split only when there are fewer shards than `min_shards`, and
// min_shards never depends on num_workers, so the batches do not either. Each epoch shuffles the
// shard order from (seed, epoch) (ShardOrder); with a pre-scan the epoch is then cut at documents
// into ranks of equal tokens (deal.h), without one whole shards are dealt, in that order, to the
// rank with the fewest bytes so far (DealShards; ties: the lowest rank). Plain functions;
// thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "records/record_source.h"
#include "stoker/status.h"

namespace stoker::stream {

struct StreamShard {
  std::string path;
  uint32_t file = 0;        // index of the input file
  bool jsonl = true;        // else the whole (decompressed) file is one document
  bool records = false;     // a record shard (records::RecordSource): one document per record
  RecordShard record;       // records: the shard to open (format, digests)
  bool compressed = false;  // .gz / .zst: read from the file's start
  uint64_t begin = 0;       // byte range of the (uncompressed) file; whole files: [0, size)
  uint64_t end = 0;
  uint64_t size_bytes() const { return end - begin; }
};

// Expands files and directories (pack's order and rules, ExpandPackInputs "auto": record shards by
// name — WebDataset, TFRecord, MDS and whatever OpenRecordShard reads — else JSONL/text) into
// shards, splitting uncompressed JSONL files into equal byte ranges when there are fewer than
// `min_shards` files. Record shards and compressed files are never split.
Result<std::vector<StreamShard>> MakeShards(const std::vector<std::string>& inputs,
                                            uint64_t min_shards);

// The shard indices 0..n-1 in `epoch`'s shuffled order (seeded by (seed, epoch)).
std::vector<uint32_t> ShardOrder(size_t n, uint64_t seed, uint64_t epoch);

// The shards of each rank for `epoch`, in the order that rank reads them (whole shards by bytes:
// the deal without a pre-scan, deal.h).
std::vector<std::vector<uint32_t>> DealShards(const std::vector<StreamShard>& shards, uint64_t seed,
                                              uint64_t epoch, uint32_t world_size);

// splitmix64: the stream's RNG (one uint64 of state) and its key mixer.
uint64_t SplitMix64(uint64_t* state);
uint64_t MixKey(uint64_t a, uint64_t b, uint64_t c);

}  // namespace stoker::stream
