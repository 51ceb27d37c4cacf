// StokerDataset::OpenRemote: a dataset in an object store, opened with a constant number of
// requests (the manifest and the length index), its shards left to the ShardOpener.
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "cache/cache_defaults.h"
#include "cache/shard_cache.h"
#include "common/file_util.h"
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
  if (options.opener != nullptr) {
    ds->opener_ = options.opener;
  } else if (!options.cache_dir.empty()) {
    cache::CacheOptions co;
    co.dir = options.cache_dir;
    co.budget_bytes = options.cache_size_bytes;
    if (co.budget_bytes == 0) {
      STOKER_ASSIGN_OR_RETURN(co.budget_bytes, cache::DefaultBudgetBytes(co.dir));
    }
    // Under exact reads (global shuffle) only the .idx files are cached.
    const bool bins = options.reads != RemoteReads::kExact;
    for (const ShardInfo& s : ds->manifest_.shards) {
      co.largest_object_bytes =
          std::max({co.largest_object_bytes, bins ? s.bin_bytes : 0, s.idx_bytes});
    }
    STOKER_ASSIGN_OR_RETURN(std::shared_ptr<cache::ShardCache> cache,
                            cache::ShardCache::Open(co, backend));
    ds->opener_ = NewCacheShardOpener(std::move(cache), backend, options.reads);
  } else {
    ds->opener_ = NewBackendShardOpener(backend, options.reads, options.part_bytes);
  }
  const StokerDataset* self = ds.get();
  ds->pool_ =
      std::make_unique<ShardPool>(num_shards, std::max<uint64_t>(options.max_open_shards, 1),
                                  [self](uint64_t s) -> Result<ShardPool::Shard> {
                                    return self->opener_->Open(self->shard_ref(s));
                                  });
  return ds;
}

}  // namespace stoker
