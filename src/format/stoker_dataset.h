// StokerDataset: the TokenSource of a stoker dataset directory (manifest.json + Megatron shards).
//
// Open reads the manifest once, opens every shard once and runs only O(1) checks per shard (header,
// dtype, document count and file sizes against the manifest), so that a dataset of 10,000 shards
// opens in well under a second; `stoker verify` runs the full checks. A global document number is
// mapped to (shard, local document) by binary search over the shards' first documents.
//
// Shards stay mapped from Open on while the process's budget of mapped shards has room for all of
// them (MappedShardReservation); reads then take no lock. A dataset with more shards than its share
// maps them on demand through a ShardPool: the most recently read shards stay mapped, and a shard
// mapped again is checked against the manifest again. Global shuffle over such a dataset maps and
// unmaps often; block shuffle keeps each stretch of reads within a few shards.
// A remote dataset (s3://, http(s)://; OpenRemote) costs a constant number of requests to open,
// whatever its shard count: the manifest and the length index, nothing per shard. Its shards are
// opened on demand, on the first read that needs them, through one seam (shard_opener.h), and a
// few stay open (RemoteDatasetOptions::max_open_shards).
// Thread-safe: immutable after Open (the pool synchronizes itself).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "format/length_index.h"
#include "format/manifest.h"
#include "format/megatron_source.h"
#include "format/shard_map_budget.h"
#include "format/shard_opener.h"
#include "format/shard_pool.h"
#include "stoker/storage_stats.h"
#include "stoker/token_source.h"
#include "storage/metering_backend.h"
#include "storage/ranged_source.h"

namespace stoker {

struct RemoteDatasetOptions {
  // Serves the dataset's URI; null: OpenBackendForUri(uri) with retries, the default per-host
  // bound and metering into the dataset's own counters (storage_stats()).
  std::shared_ptr<storage::Backend> backend;
  // The shard seam; null: NewBackendShardOpener(backend, reads, part_bytes).
  std::shared_ptr<const ShardOpener> opener;
  RemoteReads reads = RemoteReads::kParts;
  size_t part_bytes = storage::kDefaultPartBytes;
  uint64_t max_open_shards = 8;  // shards (and their fetched parts) kept open, at least 1
  // If set (and `opener` is not): shards are read through a node-local cache in this directory
  // (cache/shard_cache.h) with this budget (0: the stated default, cache/cache_defaults.h).
  std::string cache_dir;
  uint64_t cache_size_bytes = 0;
  // With reads = kExact and a cache: when every shard's .bin and .idx together fit the cache's
  // budget, read whole shards through the cache instead (kParts, fetched ahead in plan order) and
  // keep up to kWholeShardsOpen shards open. The loader sets it under global shuffle
  // (docs/cache.md, "Global shuffle over remote data").
  bool whole_shards_if_they_fit = false;
  // The bytes of the same cache's budget that other datasets of the same reader (a loader's
  // mixture) already read whole through it: this dataset fits only in what they leave.
  uint64_t budget_claimed_bytes = 0;
  // Read with kExact (after the choice above): when every shard's .idx together take at most
  // this many bytes, every shard stays open once opened (its .idx in memory; a kExact .bin holds
  // no memory or descriptor), so that a global shuffle does not reopen a shard, and read its
  // .idx again (a GET without a cache), for nearly every document. 0: max_open_shards only. The
  // loader sets kRangedIndexBytesOpen.
  uint64_t keep_indexes_bytes = 0;
  // Said once, on stderr, when the dataset is read by ranged GETs per document (kExact): its
  // delivery is then bound by request latency.
  bool warn_if_ranged = false;
};

// The shards a remote dataset read whole through its cache under global shuffle keeps open (each
// holds its .idx in memory and, while read, a pin and a descriptor on its cached .bin).
inline constexpr uint64_t kWholeShardsOpen = 1024;
// The .idx bytes a remote dataset read by ranges keeps in memory at most (keep_indexes_bytes, as
// the loader sets it): 22 M documents at 12 bytes each.
inline constexpr uint64_t kRangedIndexBytesOpen = 256ull << 20;

class StokerDataset : public TokenSource {
 public:
  // `dir` holds manifest.json. Errors name the manifest or the shard file at fault.
  static Result<std::unique_ptr<StokerDataset>> Open(const std::string& dir);
  // A dataset at a remote URI (s3://bucket/prefix, http(s)://host/path): GETs its manifest and,
  // if it has one, its length index (kept in a deleted temporary file, mapped); opens no shard.
  // Errors name the URI of the object at fault.
  static Result<std::unique_ptr<StokerDataset>> OpenRemote(const std::string& uri,
                                                           const RemoteDatasetOptions& options);

  std::string_view format() const override { return "stoker"; }
  const std::string& path() const override { return dir_; }
  TokenDType dtype() const override { return manifest_.dtype; }
  uint64_t num_documents() const override { return first_document_.back(); }
  uint64_t num_tokens() const override { return num_tokens_; }
  uint64_t document_length(uint64_t doc) const override;
  void DocumentLengths(uint64_t first, uint64_t count, uint64_t* out) const override;
  Status Read(uint64_t doc, uint64_t offset, uint64_t count, int32_t* out) const override;
  Status Read(uint64_t doc, uint64_t offset, uint64_t count, int64_t* out) const override;
  // Within one shard that is open and stays open (no I/O); nullopt across shards.
  std::optional<uint64_t> TokensBetween(uint64_t doc, uint64_t end, uint64_t next_doc,
                                        uint64_t next_offset) const override;
  Status ReadSpan(uint64_t doc, uint64_t offset, uint64_t count, int32_t* out) const override;
  void PrefetchIndex(uint64_t doc) const override;
  void PrefetchTokens(uint64_t doc, uint64_t offset) const override;
  uint64_t num_shards() const override { return first_document_.size() - 1; }
  uint64_t shard_first_document(uint64_t shard) const override { return first_document_[shard]; }
  std::string shard_path(uint64_t shard) const override { return shard_prefix(shard); }
  // Read in place from the length index when there is one; copied otherwise (with a note on
  // stderr for a large dataset: `stoker index` writes one).
  Result<DatasetLengths> Lengths() const override;
  std::optional<TokenizerInfo> tokenizer_info() const override { return manifest_.tokenizer; }
  bool remote_shards() const override { return remote(); }
  bool caches_shards() const override { return cached(); }
  ShardBytes shard_bytes(uint64_t shard) const override;
  void ScheduleShards(const std::vector<uint64_t>& shards) const override;
  Status StageShard(uint64_t shard) const override;

  const Manifest& manifest() const { return manifest_; }
  // The dataset's length index (checked against the manifest at Open), or null when the manifest
  // records none (a dataset written before it existed: `stoker index` adds one).
  const std::shared_ptr<const LengthIndex>& length_index() const { return length_index_; }
  // Whether every shard stays mapped (else they are mapped on demand), and the pool's counters
  // (all zero when every shard stays mapped).
  bool all_shards_mapped() const { return pool_ == nullptr; }
  ShardPool::Counters pool_counters() const;
  // Path prefix of shard `s` (dir joined with the manifest's prefix).
  std::string shard_prefix(uint64_t s) const;
  // Whether the dataset was opened with OpenRemote.
  bool remote() const { return opener_ != nullptr; }
  // Its requests (when opened with its own backend) and the cache's hits; zero for a local dataset.
  StorageStats storage_stats() const override;
  // A remote dataset: the opener's reference for shard `s` (its URIs and manifest entry), and the
  // opener (null for a local dataset).
  ShardRef shard_ref(uint64_t s) const;
  const ShardOpener* opener() const { return opener_.get(); }
  bool cached() const { return opener_ != nullptr && opener_->cached(); }
  // How a remote dataset's .bin files are read (after whole_shards_if_they_fit) and its cache's
  // budget (0: no cache).
  RemoteReads remote_reads() const { return reads_; }
  bool reads_by_request() const override { return remote() && reads_ == RemoteReads::kExact; }
  uint64_t cache_budget_bytes() const { return cache_budget_; }

 private:
  StokerDataset() = default;
  // The shard holding global document `doc` (< num_documents()).
  uint64_t FindShard(uint64_t doc) const;  // ShardOf, on the hot path
  // Maps shard `s` and checks it against the manifest; errors name the shard and the manifest.
  Result<ShardPool::Shard> OpenShard(uint64_t s) const;
  // Where a global document lives. `shard` points into resident_, at a shard the pool keeps for
  // good (ShardPool::Kept), or at `hold`, which keeps a shard mapped on demand mapped while the
  // caller reads it.
  struct Location {
    uint64_t index = 0;  // the shard
    uint64_t doc = 0;    // the document within it
    const TokenSource* shard = nullptr;
    ShardPool::Shard hold;
  };
  // Fills `at` for `doc` (< num_documents()), mapping its shard if needed.
  Status Locate(uint64_t doc, Location* at) const;
  template <typename T>
  Status ReadImpl(uint64_t doc, uint64_t offset, uint64_t count, T* out) const;

  std::string dir_;
  Manifest manifest_;
  MappedShardReservation reservation_;
  // Every shard, when all stay mapped; empty otherwise. Reads index it without a lock.
  std::vector<ShardPool::Shard> resident_;
  // The shards mapped on demand, when not all fit the reservation.
  std::unique_ptr<ShardPool> pool_;
  std::shared_ptr<const LengthIndex> length_index_;
  // Remote datasets only: the shard seam, and the counters of the backend opened for it.
  std::shared_ptr<const ShardOpener> opener_;
  std::shared_ptr<storage::StorageMetrics> metrics_;
  std::vector<uint64_t> first_document_{0};  // num_shards + 1 entries
  uint64_t num_tokens_ = 0;
  RemoteReads reads_ = RemoteReads::kParts;
  uint64_t remote_bytes_ = 0;  // a remote dataset's bytes: .bin + .idx of every shard
  uint64_t cache_budget_ = 0;
};

// Checks shard `s` of `manifest` (opened as `shard`) against the manifest: dtype, documents and
// file sizes. Shared by StokerDataset::Open and Verify.
Status CheckShardAgainstManifest(const Manifest& manifest, uint64_t s, const MegatronSource& shard,
                                 const std::string& manifest_path);

}  // namespace stoker
