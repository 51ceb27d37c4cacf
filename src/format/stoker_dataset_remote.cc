// StokerDataset::OpenRemote: a dataset in an object store, opened with a constant number of
// requests (the manifest and the length index), its shards left to the ShardOpener.
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "cache/cache_defaults.h"
#include "cache/shard_cache.h"
#include "common/file_util.h"
#include "common/human_size.h"
#include "common/temp_dir.h"
#include "common/uri.h"
#include "format/cache_shard_opener.h"
#include "format/dataset_length_index.h"
#include "format/stoker_dataset.h"
#include "storage/open_backend.h"

namespace stoker {
namespace {

// Every occurrence of `from` in the message of `status` replaced by `to`.
Status Renamed(const Status& status, const std::string& from, const std::string& to) {
  std::string m = status.message();
  for (size_t at = m.find(from); at != std::string::npos; at = m.find(from, at + to.size())) {
    m.replace(at, from.size(), to);
  }
  return Status(status.code(), m);
}

// GETs the length index into a temporary file, maps it with the same checks as a local one, and
// deletes the file (the mapping stays): the plan reads the lengths in place.
Result<std::shared_ptr<const LengthIndex>> FetchLengthIndex(const storage::Backend& backend,
                                                            const std::string& uri,
                                                            const Manifest& manifest) {
  const std::string remote = JoinUri(uri, manifest.length_index->file);
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source,
                          backend.OpenForReadWithSize(remote, manifest.length_index->bytes));
  STOKER_ASSIGN_OR_RETURN(std::unique_ptr<TempDir> tmp, TempDir::Create("stoker-lengths-"));
  std::string bytes(source->size_bytes(), '\0');
  STOKER_RETURN_IF_ERROR(ReadExactlyAt(*source, 0, bytes.size(), bytes.data(), "length index"));
  Manifest local = manifest;
  local.length_index->file = std::string(kLengthIndexFileName);
  STOKER_RETURN_IF_ERROR(WriteFileAtomically(tmp->Join(kLengthIndexFileName), bytes));
  Result<std::shared_ptr<const LengthIndex>> index = OpenDatasetLengthIndex(tmp->path(), local);
  if (!index.ok()) {
    return Renamed(Renamed(index.status(), tmp->Join(kLengthIndexFileName), remote), tmp->path(),
                   uri);
  }
  return index;  // ~TempDir removes the file; the mapping keeps its pages
}

}  // namespace

StorageStats StokerDataset::storage_stats() const {
  if (!remote()) return {};
  StorageStats out;
  if (metrics_ != nullptr) out = storage::ToStorageStats(metrics_->Snapshot());
  if (opener_ != nullptr) out.cache_hits = opener_->cache_hits();
  if (reads_ == RemoteReads::kExact) {
    out.ranged_datasets = 1;
    out.ranged_bytes = remote_bytes_;
    out.ranged_cache_budget = cache_budget_;
  } else if (cached()) {
    out.whole_shard_datasets = 1;
  }
  return out;
}

Result<std::unique_ptr<StokerDataset>> StokerDataset::OpenRemote(
    const std::string& uri, const RemoteDatasetOptions& options) {
  auto ds = std::unique_ptr<StokerDataset>(new StokerDataset());
  ds->dir_ = uri;
  while (ds->dir_.size() > 1 && ds->dir_.back() == '/') ds->dir_.pop_back();
  std::shared_ptr<storage::Backend> backend = options.backend;
  if (backend == nullptr) {
    ds->metrics_ = std::make_shared<storage::StorageMetrics>();
    storage::BackendOptions bo;
    bo.s3.read_part_bytes = options.part_bytes;
    bo.http.part_bytes = options.part_bytes;
    // The cache's download threads can outlive this dataset: the backend owns the metrics.
    STOKER_ASSIGN_OR_RETURN(backend, storage::OpenMeteredBackendForUri(ds->dir_, ds->metrics_, bo));
  }
  const std::string manifest_uri = JoinUri(ds->dir_, kManifestFileName);
  Result<std::string> text = storage::ReadAll(*backend, manifest_uri);
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) {
      return NotFound(manifest_uri + ": no manifest (not a stoker dataset, or an unfinished one)");
    }
    return text.status();
  }
  STOKER_ASSIGN_OR_RETURN(ds->manifest_, Manifest::Parse(*text, manifest_uri));
  const uint64_t num_shards = ds->manifest_.shards.size();
  ds->first_document_.reserve(num_shards + 1);
  for (const ShardInfo& s : ds->manifest_.shards) {
    ds->first_document_.push_back(ds->first_document_.back() + s.documents);
  }
  ds->num_tokens_ = ds->manifest_.total_tokens();
  if (ds->manifest_.length_index) {
    STOKER_ASSIGN_OR_RETURN(ds->length_index_, FetchLengthIndex(*backend, ds->dir_, ds->manifest_));
  } else if (num_shards > 1) {
    std::fprintf(stderr,
                 "stoker: note: %s has no length index; planning reads each of its %llu shards' "
                 ".idx (one GET per shard). Pack with a current stoker, or run `stoker index` on "
                 "a local copy and upload lengths.stkidx and manifest.json.\n",
                 ds->dir_.c_str(), static_cast<unsigned long long>(num_shards));
  }
  for (const ShardInfo& s : ds->manifest_.shards) ds->remote_bytes_ += s.bin_bytes + s.idx_bytes;
  RemoteReads reads = options.reads;
  uint64_t open_shards = options.max_open_shards;
  if (options.opener != nullptr) {
    ds->opener_ = options.opener;
  } else if (!options.cache_dir.empty()) {
    cache::CacheOptions co;
    co.dir = options.cache_dir;
    co.budget_bytes = options.cache_size_bytes;
    if (co.budget_bytes == 0) {
      STOKER_ASSIGN_OR_RETURN(co.budget_bytes, cache::DefaultBudgetBytes(co.dir));
    }
    ds->cache_budget_ = co.budget_bytes;
    // Global shuffle reads every shard in every epoch: when they all fit the budget, whole shards
    // fetched ahead in plan order (several at once) serve every document from disk, and a later
    // epoch makes no request. Else only the .idx files are cached and documents are ranged GETs.
    if (reads == RemoteReads::kExact && options.whole_shards_if_they_fit &&
        ds->remote_bytes_ + options.budget_claimed_bytes <= co.budget_bytes) {
      reads = RemoteReads::kParts;
      open_shards = std::max(open_shards, std::min<uint64_t>(num_shards, kWholeShardsOpen));
    }
    const bool bins = reads != RemoteReads::kExact;
    for (const ShardInfo& s : ds->manifest_.shards) {
      co.largest_object_bytes =
          std::max({co.largest_object_bytes, bins ? s.bin_bytes : 0, s.idx_bytes});
    }
    STOKER_ASSIGN_OR_RETURN(std::shared_ptr<cache::ShardCache> cache,
                            cache::ShardCache::Open(co, backend));
    ds->opener_ = NewCacheShardOpener(std::move(cache), backend, reads);
  } else {
    ds->opener_ = NewBackendShardOpener(backend, reads, options.part_bytes);
  }
  ds->reads_ = reads;
  if (reads == RemoteReads::kExact && options.keep_indexes_bytes > 0) {
    uint64_t idx_bytes = 0;
    for (const ShardInfo& s : ds->manifest_.shards) idx_bytes += s.idx_bytes;
    if (idx_bytes <= options.keep_indexes_bytes) open_shards = std::max(open_shards, num_shards);
  }
  if (reads == RemoteReads::kExact && options.warn_if_ranged && options.opener == nullptr) {
    const std::string size = FormatSize(ds->remote_bytes_);
    std::string why;
    if (ds->cache_budget_ == 0) {
      why = "it has no cache (--no-cache, cache_dir=None); through a cache whose budget holds its ";
      why += size + " (--cache-size), whole shards are fetched ahead and kept";
    } else {
      why = "its " + size + " exceed the cache budget of " + FormatSize(ds->cache_budget_);
      if (options.budget_claimed_bytes > 0) {
        why += " less the " + FormatSize(options.budget_claimed_bytes) +
               " that the mixture's other datasets read whole through it";
      }
      why += "; with --cache-size " + size + " or more, whole shards are fetched ahead and kept";
    }
    std::fprintf(
        stderr,
        "stoker: warning: %s is read under global shuffle by ranged GETs of its document "
        "pieces (the loader fetches the next steps' pieces ahead, many requests in flight), "
        "so its delivery is bound by request latency: %s. Or use --shuffle block "
        "(docs/cache.md, \"Global shuffle over remote data\").\n",
        ds->dir_.c_str(), why.c_str());
  }
  const StokerDataset* self = ds.get();
  ds->pool_ = std::make_unique<ShardPool>(num_shards, std::max<uint64_t>(open_shards, 1),
                                          [self](uint64_t s) -> Result<ShardPool::Shard> {
                                            return self->opener_->Open(self->shard_ref(s));
                                          });
  return ds;
}

}  // namespace stoker
