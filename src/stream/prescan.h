// Pre-scan: every shard's document lengths (tokens), which fix the steps per epoch before the
// first batch. A file's scan is read from a scan cache when one matches (the file's size and
// modification time, the tokenizer and the reader's options); else the shards are read (in
// parallel, one reader per thread) and, when asked, the scan is written for next time.
//
// Scan files: `.<file name>.stoker-scan` beside the data (hidden, so directory inputs skip it;
// written only when asked: --beside) or
// `<cache dir>/<xxh3 of the absolute path>.stoker-scan`, both written atomically (temporary name,
// fsync, rename). The layout is in docs/streaming.md ("Cached pre-scan"). Plain functions;
// thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stream/deal.h"
#include "stream/rank_stream.h"

namespace stoker::stream {

struct PrescanOptions {
  // Where scans are looked up (after beside the file) and written; "" = none.
  std::string cache_dir;
  bool read_beside = true;    // look for .<file name>.stoker-scan beside it
  bool write = false;         // write the scans that were read from the data
  bool write_beside = false;  // write beside the data instead of into cache_dir
  int threads = 0;            // 0: the hardware's
};

// The default cache directory: the cache root's stream-scan/ (common/cache_root.h); "" when
// caching is off ($STOKER_CACHE_DIR=off).
std::string DefaultScanCacheDir();

struct PrescanSummary {
  uint64_t files = 0, files_from_cache = 0, documents = 0, tokens = 0, bytes = 0;
  std::vector<std::string> written;  // scan files written
};

// What the pre-scan knows of every shard of ctx, in the shards' order (deal.h): document lengths,
// JSONL documents' byte offsets and the records that yield no document.
Result<ShardScan> ScanShards(const StreamContext& ctx, const PrescanOptions& options,
                             PrescanSummary* summary = nullptr);

// The document lengths of every shard of ctx, in the shards' order; `offsets`, if given, receives
// each document's start (JSONL: the byte offset of its line; else 0).
Result<std::vector<std::vector<uint32_t>>> PrescanShards(
    const StreamContext& ctx, const PrescanOptions& options, PrescanSummary* summary = nullptr,
    std::vector<std::vector<uint64_t>>* offsets = nullptr);

}  // namespace stoker::stream
