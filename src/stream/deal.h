// The deal of an epoch's documents to ranks (docs/streaming.md, "How rows are made", 2). With a
// pre-scan (ShardScan: every shard's document lengths), the epoch's shard order (shuffled from
// (seed, epoch)) is read as one sequence of documents and cut at document boundaries into
// world_size contiguous pieces of equal weight (tokens; pad: documents), so ranks differ by at most
// about one document whatever the shard sizes: a cut may fall inside any shard (an uncompressed
// JSONL range opens at the document's byte offset; a compressed file is decompressed up to it; a
// record shard skips its records before it). Without a pre-scan (steps_per_epoch given) whole
// shards are dealt by bytes (DealShards). Plain functions; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "stoker/plan.h"
#include "stream/doc_pipeline.h"
#include "stream/shards.h"

namespace stoker::stream {

// What the pre-scan knows of each shard of a stream, by shard index.
struct ShardScan {
  // Each document's tokens (EOS included).
  std::vector<std::vector<uint32_t>> lengths;
  // JSONL shards: each document's byte offset (of its line, in the decompressed file); else empty.
  std::vector<std::vector<uint64_t>> offsets;
  // The records that yield no document (empty, skipped bad lines), sorted: JSONL shards their
  // lines' byte offsets, record shards their record indices. Usually empty.
  std::vector<std::vector<uint64_t>> skipped;
  // Chat streams: each document's trained targets (its loss mask's tokens after its first: the
  // labels that are not -100); empty for text (L - 1 each) and for a scan without them.
  std::vector<std::vector<uint32_t>> trained;
};

// The reading unit of documents [begin, end) of shard `s` (end = lengths[s].size(): to its end).
// Requires a cuttable shard where begin or end is inside it (CanCut).
ReadUnit DocumentRange(const StreamShard& shard, const ShardScan& scan, uint32_t s, uint64_t begin,
                       uint64_t end);
// Whether the shard can be cut at documents: record shards, and JSONL shards with offsets.
bool CanCut(const StreamShard& shard, const ShardScan& scan, uint32_t s);

// The reading units of each rank for `epoch`, in the order that rank reads them. `scan` null:
// whole shards dealt by bytes (DealShards).
std::vector<std::vector<ReadUnit>> DealEpoch(const std::vector<StreamShard>& shards,
                                             const ShardScan* scan, uint64_t seed, uint64_t epoch,
                                             uint32_t world_size, PackMode pack);

// The document lengths a unit yields (lengths[shard][docs, end_docs)).
void AppendUnitLengths(const ShardScan& scan, const ReadUnit& u, std::vector<uint32_t>* out);
// The same documents' values of `per_shard` (one per document, by shard: scan.trained).
void AppendUnitValues(const std::vector<std::vector<uint32_t>>& per_shard, const ReadUnit& u,
                      std::vector<uint32_t>* out);

}  // namespace stoker::stream
